import copy
import json
import unittest

from helpers import AMK_TESTDATA, megaproof

from megaproof import amk


def load(name):
    return json.loads((AMK_TESTDATA / name).read_text(encoding="utf-8"))


class Validate(unittest.TestCase):
    """megaproof.amk.validate has AutoMegaKernel's report shape."""

    def test_safe_lowerings_have_no_errors(self):
        files = sorted(AMK_TESTDATA.glob("*.json"))  # unsafe/ holds the unsafe ones
        self.assertTrue(files)
        for f in files:
            with self.subTest(file=f.name):
                res = amk.validate(f)
                self.assertTrue(res.ok, res.report())
                self.assertTrue(res)
                self.assertEqual(res.errors, [])
                self.assertEqual(res.stats["verdict"], "safe")
                self.assertTrue(res.report().startswith("[VALID] "))

    def test_unsafe_lowering_has_errors(self):
        doc = load("split_kv.json")
        bad = copy.deepcopy(doc)
        bad["tasks"][6]["waits"][0]["threshold"] = 1  # a partial wait on a shared counter
        for t in bad["tasks"]:  # unpinned: AMK's loader may place its producers on other SMs
            t.pop("sm", None)
        res = amk.validate(bad)
        self.assertFalse(res)
        self.assertFalse(res.ok)
        self.assertTrue(res.errors)
        self.assertTrue(any(" race.raw: " in e or " uninitialized-read: " in e for e in res.errors), res.errors)
        self.assertTrue(any(e.startswith("task ") for e in res.errors), res.errors)
        self.assertTrue(res.report().startswith("[REJECTED] "))
        self.assertTrue(res.report().splitlines()[1].startswith("  ERROR: "))
        self.assertIs(res.megaproof.verdict, megaproof.Verdict.UNSAFE)
        self.assertTrue(all(f.witness for f in res.megaproof.findings if f.code == "race.raw"))

    def test_deadlock_names_the_task_and_its_label(self):
        doc = load("split_kv.json")
        doc["tasks"][9]["waits"][0]["threshold"] = 2
        t = doc["tasks"][9]
        res = amk.validate(doc)
        want = f"task {t['id']} ({t.get('label') or ''}) deadlock.unsatisfiable: "
        self.assertTrue(any(e.startswith(want) for e in res.errors), (want, res.errors))

    def test_megakernel_program_objects(self):
        class MegakernelProgram:
            def __init__(self, d):
                self.d = d

            def to_dict(self):
                return self.d

        self.assertTrue(amk.validate(MegakernelProgram(load("ir_spec.json"))))
        bad = load("ir_spec.json")
        bad["tasks"][1]["waits"] = []  # the GEMV no longer waits for the norm
        self.assertFalse(amk.validate(MegakernelProgram(bad)))

    def test_malformed_is_rejected_not_raised(self):
        doc = load("ir_spec.json")
        doc["tasks"][0]["waits"] = [{"counter": 999, "threshold": 1}]
        res = amk.validate(doc)
        self.assertFalse(res)
        self.assertTrue(any("invalid.reference at $.tasks[0].waits[0].counter" in e for e in res.errors), res.errors)
        for doc in [b"not json", b"{}"]:
            with self.subTest(doc=doc):
                self.assertFalse(amk.validate(doc))


if __name__ == "__main__":
    unittest.main()
