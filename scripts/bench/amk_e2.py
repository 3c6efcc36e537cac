"""The E2-shaped toy population written by AutoMegaKernel's own lowering, and
its own validate() timed on it.

AMK (github.com/RightNow-AI/AutoMegaKernel) is not a dependency: point this
script at a checkout of it (its IR, lowering and validate() are stdlib-only
Python). It lowers the grid of toy decoders that schedule/amk's
TestE2Population generates in Go (1-3 layers, hidden 64/80/96/128, GEMV
N_tile 8-256, 82-192 SMs: 360 programs) with AMK's `lower()`, writes each
with AMK's own `to_json()` (indented, full target record), checks that
validate() accepts it, and with --time times validate() on every file
loaded by AMK's own loader: each program 5 times, CPU time
(time.process_time), mean and median per program.

    python3 scripts/bench/amk_e2.py --amk /path/to/AutoMegaKernel --out e2amk
    python3 scripts/bench/amk_e2.py --amk /path/to/AutoMegaKernel --time e2amk/*.json
    megaproof verify --json e2amk/*.json
"""

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import time


def write_population(out):
    from schedule.graph import ModelConfig, _ToyKeys, _build_decoder_graph
    from schedule.ir import TARGETS, ScheduleConfig, validate
    from schedule.lower import lower

    os.makedirs(out, exist_ok=True)
    n = 0
    for layers in (1, 2, 3):
        for hidden in (64, 80, 96, 128):
            for tile in (8, 16, 32, 64, 128, 256):
                for sms in (82, 108, 132, 148, 192):
                    cfg = ModelConfig(hidden=hidden, n_heads=4, n_kv_heads=2, head_dim=hidden // 4,
                                      intermediate=2 * hidden, vocab=256, n_layers=layers)
                    graph = _build_decoder_graph(cfg, _ToyKeys())
                    target = dataclasses.replace(TARGETS["h100"], num_sms=sms)
                    prog = lower(graph, target=target,
                                 config=ScheduleConfig(tiling={"gemv": {"N_tile": tile}}), pos=3)
                    res = validate(prog)
                    if not res:
                        sys.exit(f"AMK rejects its own lowering l{layers} h{hidden} t{tile} s{sms}:\n{res.report()}")
                    name = f"toy-l{layers}-h{hidden}-t{tile}-s{sms}.json"
                    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
                        f.write(prog.to_json())
                    n += 1
    print(f"{n} programs written to {out}")


def time_validate(files, calls):
    from schedule.ir import MegakernelProgram, validate

    progs = [MegakernelProgram.load(f) for f in files]
    per = []
    rejected = 0
    for p in progs:
        t0 = time.process_time()
        for _ in range(calls):
            res = validate(p)
        per.append((time.process_time() - t0) / calls)
        rejected += not res
    print(json.dumps({
        "programs": len(progs),
        "rejected": rejected,
        "calls": calls * len(progs),
        "cpu_us_per_program": round(sum(per) / len(per) * 1e6, 1),
        "median_us": round(statistics.median(per) * 1e6, 1),
        "programs_per_cpu_s": round(len(per) / sum(per), 1),
        "python": platform.python_version(),
    }))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--amk", required=True, help="a checkout of AutoMegaKernel")
    ap.add_argument("--out", help="write the population to this directory")
    ap.add_argument("--time", nargs="+", metavar="FILE", help="time validate() on these files")
    ap.add_argument("--calls", type=int, default=5, help="validate() calls per program")
    args = ap.parse_args()
    sys.path.insert(0, args.amk)
    if args.out:
        write_population(args.out)
    if args.time:
        time_validate(args.time, args.calls)
    if not args.out and not args.time:
        ap.error("nothing to do: give --out or --time")


if __name__ == "__main__":
    main()
