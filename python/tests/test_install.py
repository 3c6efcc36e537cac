import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
import venv

from helpers import REPO, binary

SNIPPET = textwrap.dedent(
    """
    import copy, json, sys
    import megaproof
    from megaproof import amk

    assert not megaproof.__file__.startswith(sys.argv[1]), megaproof.__file__  # the installed copy
    p = json.load(open(sys.argv[2]))
    safe = megaproof.verify(p)
    racy = copy.deepcopy(p)
    for t in racy["tasks"]:
        if t["name"] == "down.1":
            del t["before"]
    unsafe = megaproof.verify(racy)
    print(safe.verdict.value, unsafe.verdict.value, ",".join(unsafe.codes()))
    ok = amk.validate(sys.argv[3])
    bad = json.load(open(sys.argv[3]))
    bad["tasks"][9]["waits"][0]["threshold"] = 2
    rejected = amk.validate(bad)
    print(bool(ok), len(ok.errors), bool(rejected), len(rejected.errors) > 0)
    """
)


class Install(unittest.TestCase):
    """pip install ./python into a fresh venv without network, then use it."""

    def test_fresh_venv(self):
        try:
            import ensurepip  # noqa: F401
        except ImportError:
            self.skipTest("this Python has no ensurepip")
        with tempfile.TemporaryDirectory() as d:
            env_dir = os.path.join(d, "venv")
            venv.EnvBuilder(with_pip=True).create(env_dir)
            py = os.path.join(env_dir, "bin", "python")
            env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", MEGAPROOF_BIN=binary())
            env.pop("PYTHONPATH", None)
            # A copy of python/ outside the checkout is what pip sees; --no-index: no network.
            r = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-cache-dir", str(REPO / "python")],
                               env=env, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.assertEqual(r.returncode, 0, r.stdout)
            r = subprocess.run([py, "-c", SNIPPET, str(REPO / "python"), str(REPO / "cmd/megaproof/testdata/default.json"),
                                str(REPO / "schedule/amk/testdata/split_kv.json")],
                               env=env, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertEqual(r.stdout.split("\n")[:2], ["safe unsafe race.raw,uninitialized-read", "True 0 False True"], r.stdout)
            # python -m megaproof runs the binary.
            r = subprocess.run([py, "-m", "megaproof", "--version"], env=env, stdout=subprocess.PIPE, text=True)
            self.assertEqual(r.returncode, 0)
            self.assertTrue(r.stdout.startswith("megaproof "), r.stdout)


if __name__ == "__main__":
    unittest.main()
