import dataclasses
import json
import subprocess
import unittest

from helpers import README_EXAMPLE, REPO, binary, megaproof, racy_twin

from megaproof import Event, Finding, Location, Report, SchemaError, Span, Stats, Verdict


class SchemaMirror(unittest.TestCase):
    """The dataclasses mirror ``megaproof schema result`` field for field."""

    def setUp(self):
        out = subprocess.run([binary(), "schema", "result"], check=True, stdout=subprocess.PIPE).stdout
        self.schema = json.loads(out)

    def fields(self, cls):
        return {f.name for f in dataclasses.fields(cls)}

    def test_every_property_is_a_field(self):
        defs = self.schema["$defs"]
        for cls, props in [
            (Report, self.schema["properties"]),
            (Finding, defs["finding"]["properties"]),
            (Stats, defs["stats"]["properties"]),
            (Event, defs["event"]["properties"]),
            (Location, defs["location"]["properties"]),
        ]:
            with self.subTest(cls=cls.__name__):
                # has_witness is derived: whether "witness" is present.
                self.assertEqual(set(props), self.fields(cls) - {"has_witness"})
        # A span's "from" and "to" are start and stop in Python.
        self.assertEqual(set(defs["span"]["properties"]) - {"from", "to"} | {"start", "stop"}, self.fields(Span))

    def test_compact_events(self):
        # The three forms of an event read and write back exactly; a
        # record mixing them is refused.
        for rec, kind in [
            ({"thread": 3, "step": 5, "op": "begin"}, "step"),
            ({"hold": 3, "at": 5, "op": "hold before step 5 (end)", "marked": True}, "hold"),
            ({"advance": True, "op": "advance: 7 steps of 2 threads", "executed": 7, "marked": True,
              "spans": [{"thread": 0, "thread_name": "worker 0", "from": 0, "to": 4}, {"thread": 1, "from": 2, "to": 5}],
              "marks": [{"thread": 1, "step": 3, "op": "begin", "marked": True}]}, "advance"),
        ]:
            e = Event.from_dict(rec)
            self.assertEqual(e.kind, kind)
            self.assertEqual(e.to_dict(), rec)
        for bad in [{"thread": 1}, {"hold": 1, "at": 2, "step": 0}, {"advance": False}, {"advance": True, "thread": 0}, {}]:
            with self.assertRaises(SchemaError, msg=bad):
                Event.from_dict(bad)

    def test_verdicts(self):
        self.assertEqual(set(self.schema["properties"]["verdict"]["enum"]), {v.value for v in Verdict})

    def test_records_round_trip(self):
        # to_dict gives back exactly the record megaproof printed.
        racy = json.dumps(racy_twin()).encode()
        for args, stdin in [(["--", str(README_EXAMPLE)], None), (["-"], racy), (["--max-states", "1", "-"], racy)]:
            r = subprocess.run([binary(), "verify", "--json", *args], input=stdin, stdout=subprocess.PIPE)
            line = r.stdout.splitlines()[0]
            rec = json.loads(line)
            self.assertEqual(Report.from_dict(rec).to_dict(), rec)

    def test_witness_kinds(self):
        # The empty trace is kept apart from no witness, and every code
        # example's record round-trips with its locations, patch and
        # annotated events.
        codes = REPO / "verify" / "testdata" / "codes"
        for name in sorted(p.name for p in codes.glob("*.json")):
            with self.subTest(example=name):
                r = subprocess.run([binary(), "verify", "--json", str(codes / name)], stdout=subprocess.PIPE)
                rec = json.loads(r.stdout.splitlines()[0])
                rep = Report.from_dict(rec)
                self.assertEqual(rep.to_dict(), rec)
                f = rep.findings[0]
                self.assertEqual(f.has_witness, "witness" in rec["findings"][0])
                if name == "deadlock.cycle.json":
                    self.assertTrue(f.has_witness)
                    self.assertEqual((f.witness, f.witness_length), ((), 0))
                if name == "out-of-bounds.json":
                    self.assertFalse(f.has_witness)
                if f.tasks:
                    self.assertTrue(f.locations)
                    self.assertTrue(all(l.path.startswith(("$.tasks[", "$.buffers[", "$.launch")) for l in f.locations))
                for e in f.witness:
                    self.assertTrue(e.thread_name and e.path)
                    self.assertEqual(e.object is None, e.value is None)


class FromDict(unittest.TestCase):
    good = {
        "file": "f.json", "format": "megaproof/v1", "program": "p", "verdict": "unsafe",
        "findings": [{"code": "race.raw", "message": "m", "tasks": ["a", "b"], "fix": "x",
                      "witness": [{"thread": 0, "step": 1, "task": "a", "op": "begin"}], "witness_length": 1}],
        "stats": {"tasks": 2, "threads": 2, "steps": 4, "accesses": 2, "conflict_pairs": 1, "engine": "greedy"},
    }

    def test_typed(self):
        r = Report.from_dict(self.good)
        self.assertIs(r.verdict, Verdict.UNSAFE)
        self.assertFalse(r.safe)
        self.assertEqual(r.verdict, "unsafe")
        f = r.findings[0]
        self.assertEqual((f.code, f.family, f.tasks, f.fix), ("race.raw", "race", ("a", "b"), "x"))
        self.assertEqual(f.witness, (Event(0, 1, "a", "begin"),))
        self.assertEqual(r.stats.conflict_pairs, 1)
        self.assertEqual(r.codes(), ("race.raw",))
        with self.assertRaises(dataclasses.FrozenInstanceError):
            r.file = "other"

    def test_rejects_bad_shapes(self):
        bad = [
            {},
            dict(self.good, verdict="maybe"),
            dict(self.good, findings=[{"code": "x"}]),
            dict(self.good, stats={"tasks": "2"}),
            dict(self.good, findings=[{"code": "x", "message": "m", "witness": [{"thread": True, "step": 0}]}]),
            dict(self.good, findings=[{"code": "x", "message": "m", "tasks": [1]}]),
            [],
        ]
        for d in bad:
            with self.subTest(d=d), self.assertRaises(SchemaError):
                Report.from_dict(d)


if __name__ == "__main__":
    unittest.main()


class ReplayCommand(unittest.TestCase):
    """megaproof.replay wraps ``megaproof replay --json``."""

    def test_racy_twin(self):
        r = megaproof.replay(racy_twin(), binary=binary())
        self.assertTrue(r.confirmed, r.error)
        self.assertEqual(r.index, 1)
        self.assertEqual(r.finding.code, "race.raw")
        self.assertTrue(any(e.marked for e in r.finding.witness))
        self.assertEqual(len(r.finding.witness), r.finding.witness_length)

    def test_every_finding_of_a_code_example(self):
        codes = REPO / "verify" / "testdata" / "codes"
        r = megaproof.replay(codes / "deadlock.cycle.json", 1, binary=binary())
        self.assertTrue(r.confirmed)
        self.assertTrue(r.finding.has_witness)
        self.assertEqual(r.finding.witness, ())

    def test_nothing_to_replay(self):
        with self.assertRaises(megaproof.MegaproofError):
            megaproof.replay(README_EXAMPLE, binary=binary())
