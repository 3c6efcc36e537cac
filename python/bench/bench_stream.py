"""Throughput of megaproof.verify over the stream against one process per call.

    python3 python/bench/bench_stream.py [-n 300] [--binary PATH]

Verifies the README's example and its racy twin, alternately, n times each
way: through one long-lived ``megaproof verify --stream`` process (what
megaproof.verify does), and with ``megaproof verify --json -`` started for
every document. Prints documents per second and the ratio.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import megaproof  # noqa: E402

sys.path.insert(0, str(HERE.parent / "tests"))
from helpers import racy_twin, readme_example  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=300, help="documents per mode")
    ap.add_argument("--binary", help="the megaproof binary (default: megaproof.find_binary())")
    args = ap.parse_args()
    binary = megaproof.find_binary(args.binary)
    docs = [readme_example(), racy_twin()]
    lines = [json.dumps(d, separators=(",", ":")).encode() for d in docs]

    with megaproof.Verifier(binary) as v:
        v.verify(docs[0])  # start the process outside the timing
        t0 = time.perf_counter()
        for i in range(args.n):
            r = v.verify(docs[i % 2])
            assert r.verdict == ("safe" if i % 2 == 0 else "unsafe"), r
        stream = time.perf_counter() - t0

    t0 = time.perf_counter()
    for i in range(args.n):
        p = subprocess.run([binary, "verify", "--json", "-"], input=lines[i % 2], stdout=subprocess.PIPE)
        r = megaproof.Report.from_dict(json.loads(p.stdout))
        assert r.verdict == ("safe" if i % 2 == 0 else "unsafe"), r
    spawn = time.perf_counter() - t0

    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {binary}")
    print(f"stream:        {args.n} documents in {stream:.3f} s: {args.n / stream:8.0f} documents/s, {1e3 * stream / args.n:.3f} ms each")
    print(f"process/call:  {args.n} documents in {spawn:.3f} s: {args.n / spawn:8.0f} documents/s, {1e3 * spawn / args.n:.3f} ms each")
    print(f"ratio:         {spawn / stream:.1f}x")


if __name__ == "__main__":
    main()
