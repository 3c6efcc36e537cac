import json
import os
import stat
import tempfile
import threading
import unittest
from pathlib import Path

from helpers import README_EXAMPLE, binary, megaproof, racy_twin, readme_example

from megaproof import BinaryNotFound, MegaproofError, Verdict, Verifier, document_line


class Verify(unittest.TestCase):
    """The acceptance snippet: the README's example and its racy twin."""

    def test_readme_example_is_safe(self):
        r = megaproof.verify(readme_example())
        self.assertIs(r.verdict, Verdict.SAFE, r)
        self.assertEqual(r.findings, ())
        self.assertEqual((r.format, r.program), ("megaproof/v1", "tiny-mlp"))
        self.assertEqual(r.stats.tasks, 4)

    def test_racy_twin_is_unsafe(self):
        r = megaproof.verify(racy_twin())
        self.assertIs(r.verdict, Verdict.UNSAFE, r)
        self.assertEqual(r.codes(), ("race.raw", "uninitialized-read"))
        race = r.findings[0]
        self.assertEqual(race.tasks, ("up.0", "down.1"))
        self.assertIn('make "down.1" wait', race.fix)
        self.assertEqual(len(race.witness), race.witness_length)
        self.assertTrue(race.witness_length > 0)
        self.assertTrue(all(e.task and e.op for e in race.witness))
        self.assertIn("down.1", {e.task for e in race.witness})

    def test_inputs(self):
        doc = README_EXAMPLE.read_bytes()  # pretty-printed: line breaks between tokens
        self.assertIn(b"\n", doc)
        for program in [README_EXAMPLE, str(README_EXAMPLE), doc, doc.decode(), readme_example()]:
            with self.subTest(kind=type(program).__name__):
                r = megaproof.verify(program)
                self.assertIs(r.verdict, Verdict.SAFE, r)
        self.assertEqual(megaproof.verify(README_EXAMPLE).file, str(README_EXAMPLE))

    def test_integral_floats(self):
        # Python's / gives floats: 1024 / 1 is 1024.0, an integer in JSON Schema's sense.
        p = readme_example()
        p["buffers"][3]["size"] = 2048 / 2
        self.assertIsInstance(p["buffers"][3]["size"], float)
        self.assertIs(megaproof.verify(p).verdict, Verdict.SAFE)
        p["buffers"][3]["size"] = 1024.5
        self.assertIs(megaproof.verify(p).verdict, Verdict.INVALID)

    def test_to_dict_objects(self):
        class Prog:
            def to_dict(self):
                return racy_twin()

        self.assertIs(megaproof.verify(Prog()).verdict, Verdict.UNSAFE)
        with self.assertRaises(TypeError):
            megaproof.verify(42)

    def test_invalid(self):
        p = readme_example()
        p["tasks"][2]["before"][0]["wait"] = "nope"
        p["buffers"][0]["size"] = 0
        r = megaproof.verify(p)
        self.assertIs(r.verdict, Verdict.INVALID)
        self.assertIn(("invalid.reference", "$.tasks[2].before[0].wait"), {(f.code, f.path) for f in r.findings})
        for doc in [b"", b"not json", b'{"format":"megaproof/v1",']:
            with self.subTest(doc=doc):
                r = megaproof.verify(doc)
                self.assertIs(r.verdict, Verdict.INVALID)
                self.assertEqual(r.findings[0].code, "invalid.syntax")

    def test_unreadable(self):
        with tempfile.TemporaryDirectory() as d:
            r = megaproof.verify(Path(d) / "missing.json")
            self.assertIs(r.verdict, Verdict.INVALID)
            self.assertEqual(r.findings[0].code, "invalid.io")

    def test_raw_newline_in_a_string_stays_invalid(self):
        # Sent as a file, not folded onto one line (which would make it valid).
        doc = README_EXAMPLE.read_text().replace('"tiny-mlp"', '"tiny\nmlp"').encode()
        self.assertIsNone(document_line(doc))
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            f.write(doc)
            f.flush()
            for program in (f.name, doc):
                r = megaproof.verify(program)
                self.assertIs(r.verdict, Verdict.INVALID, r)
                self.assertEqual(r.findings[0].code, "invalid.syntax")


class DocumentLine(unittest.TestCase):
    def test_line_breaks_between_tokens(self):
        self.assertEqual(document_line(b'{\n "a":\r\n "x\\n\\"y"\n}\n'), b'{  "a":   "x\\n\\"y" } ')
        self.assertEqual(document_line(b'{"a":1}'), b'{"a":1}')

    def test_refused(self):
        for doc in [b'{"a":"x\ny"}', b'\xef\xbb\xbf{}\n', b'\xff\xfe{\x00}\x00', b'{"a":"\\\\"\n,"b":"\r"}']:
            with self.subTest(doc=doc):
                self.assertIsNone(document_line(doc))


class Process(unittest.TestCase):
    def test_one_process_for_many_calls(self):
        with Verifier() as v:
            v.verify(readme_example())
            pid = v._proc.pid
            reports = v.verify_many([readme_example(), racy_twin()] * 5)
            self.assertEqual(v._proc.pid, pid)
        self.assertEqual([r.verdict for r in reports], [Verdict.SAFE, Verdict.UNSAFE] * 5)

    def test_threads(self):
        want = {"tiny-mlp": Verdict.SAFE, "tiny-mlp-racy": Verdict.UNSAFE}
        got, errors = [], []
        with Verifier() as v:
            def work(i):
                try:
                    p = readme_example() if i % 2 else racy_twin()
                    r = v.verify(p)
                    got.append(r.verdict == want[r.program] and r.program == p["name"])
                except Exception as e:  # reported below
                    errors.append(e)

            threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self.assertEqual(errors, [])
        self.assertEqual(got, [True] * 16)

    def test_restarts_after_the_process_dies(self):
        with Verifier() as v:
            v.verify(readme_example())
            v._proc.kill()
            v._proc.wait()
            self.assertIs(v.verify(racy_twin()).verdict, Verdict.UNSAFE)

    def test_options(self):
        sem = {
            "format": "megaproof/v1", "name": "ring",
            "launch": {"sms": 2, "workers": 2, "cooperative": True},
            "buffers": [{"name": "x", "kind": "state", "size": 64}],
            "semaphores": [{"name": "slot", "tokens": 1}],
            "tasks": [
                {"name": n, "worker": w, "before": [{"acquire": "slot", "n": 1}],
                 "writes": [{"buffer": "x", "length": 64}], "after": [{"release": "slot", "n": 1}]}
                for n, w in (("a", 0), ("b", 1))
            ],
        }
        self.assertIs(megaproof.verify(sem).verdict, Verdict.SAFE)
        self.assertIs(megaproof.verify(sem, max_states=2).verdict, Verdict.INCONCLUSIVE)
        r = megaproof.verify(readme_example(), max_bytes=100)
        self.assertEqual(r.codes(), ("invalid.limit",))


class Binary(unittest.TestCase):
    def setUp(self):
        self.env = dict(os.environ)
        self.found = megaproof._binary._found

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.env)
        megaproof._binary._found = self.found

    def test_env(self):
        os.environ["MEGAPROOF_BIN"] = "/nonexistent/megaproof"
        with self.assertRaises(BinaryNotFound) as cm:
            megaproof.find_binary()
        self.assertIn("MEGAPROOF_BIN", str(cm.exception))
        os.environ["MEGAPROOF_BIN"] = binary() if "MEGAPROOF_BIN" not in self.env else self.env["MEGAPROOF_BIN"]
        self.assertTrue(os.path.samefile(megaproof.find_binary(), os.environ["MEGAPROOF_BIN"]))

    def test_no_binary_and_no_go(self):
        os.environ.pop("MEGAPROOF_BIN", None)
        megaproof._binary._found = None
        with tempfile.TemporaryDirectory() as d:
            os.environ["PATH"] = d
            with self.assertRaises(BinaryNotFound) as cm:
                megaproof.find_binary()
        msg = str(cm.exception)
        self.assertIn("go install github.com/megaproof/megaproof/cmd/megaproof@latest", msg)
        self.assertIn("MEGAPROOF_BIN", msg)

    def test_old_binary(self):
        # A binary that does not know --stream exits 2 at once.
        with tempfile.TemporaryDirectory() as d:
            fake = Path(d) / "megaproof"
            fake.write_text("#!/bin/sh\necho 'flag provided but not defined: -stream' >&2\nexit 2\n")
            fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
            with Verifier(str(fake)) as v, self.assertRaises(MegaproofError) as cm:
                v.verify(readme_example())
            self.assertIn("-stream", str(cm.exception))

    def test_go_build_from_checkout(self):
        if not megaproof._binary.shutil.which("go"):
            self.skipTest("Go is not installed")
        os.environ.pop("MEGAPROOF_BIN", None)
        megaproof._binary._found = None
        with tempfile.TemporaryDirectory() as cache:
            os.environ["MEGAPROOF_CACHE"] = cache
            os.environ["PATH"] = os.path.dirname(megaproof._binary.shutil.which("go"))
            if megaproof._binary.shutil.which("megaproof"):
                self.skipTest("a megaproof binary is next to go on PATH")
            path = megaproof.find_binary()
            self.assertTrue(path.startswith(cache), path)
            self.assertIs(Verifier(path).verify(racy_twin()).verdict, Verdict.UNSAFE)


if __name__ == "__main__":
    unittest.main()
