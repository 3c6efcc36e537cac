package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/megaproof/megaproof/verify"
)

// amkFault is a faulty AMK document made by editing a safe one of
// schedule/amk/testdata, and the codes whose findings must carry a patch.
type amkFault struct {
	name, file string
	edit       func(d map[string]any)
	patched    []string // one of these codes must carry a patch
}

func amkObj(v any, path ...any) map[string]any {
	for _, k := range path {
		switch k := k.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v.(map[string]any)
}

var amkFaults = []amkFault{
	{name: "dropped wait", file: "ir_spec.json",
		edit:    func(d map[string]any) { amkObj(d, "tasks", 1)["waits"] = []any{} },
		patched: amkRaces},
	{name: "dropped waits key", file: "ir_spec.json",
		edit:    func(d map[string]any) { delete(amkObj(d, "tasks", 1), "waits") },
		patched: amkRaces},
	{name: "null waits", file: "ir_spec.json",
		edit:    func(d map[string]any) { amkObj(d, "tasks", 1)["waits"] = nil },
		patched: amkRaces},
	{name: "unreachable threshold", file: "ir_spec.json",
		edit:    func(d map[string]any) { amkObj(d, "tasks", 1, "waits", 0)["threshold"] = 5 },
		patched: []string{verify.CodeDeadlockUnsatisfiable}},
	{name: "read of an activation no task writes", file: "ir_spec.json",
		edit: func(d map[string]any) {
			// The GEMV tile's weight operand becomes an activation no task
			// writes.
			d["buffers"] = append(d["buffers"].([]any), map[string]any{"id": 5, "name": "w.act", "kind": "ACTIVATION", "dtype": "F16", "shape": []any{16, 16}, "space": "HBM"})
			amkObj(d, "tasks", 1)["inputs"] = []any{3, 5}
		},
		patched: []string{verify.CodeUninitializedRead}},
	{name: "write to a weight", file: "ir_spec.json",
		edit:    func(d map[string]any) { amkObj(d, "tasks", 1)["outputs"] = []any{1} },
		patched: []string{verify.CodeReadonlyWrite}},
	{name: "wrong threshold", file: "split_kv.json",
		edit:    func(d map[string]any) { amkObj(d, "tasks", 9, "waits", 0)["threshold"] = 2 },
		patched: []string{verify.CodeDeadlockUnsatisfiable}},
	{name: "missing wait on the KV append", file: "split_kv.json",
		edit: func(d map[string]any) {
			amkObj(d, "tasks", 8)["waits"] = []any{map[string]any{"counter": 0, "threshold": 2}}
		},
		patched: amkRaces},
	{name: "partial wait on a shared counter, unpinned", file: "split_kv.json",
		edit: func(d map[string]any) {
			amkObj(d, "tasks", 6, "waits", 0)["threshold"] = 1
			for _, tk := range d["tasks"].([]any) {
				delete(tk.(map[string]any), "sm")
			}
		},
		patched: amkRaces},
	{name: "dropped waits of the combine, permuted ids", file: "split_kv_permuted.json",
		edit: func(d map[string]any) { amkObj(d, "tasks", 2)["waits"] = []any{} },
		// The combine joins SM 0's queue after the shard pinned there, so
		// the shards of other SMs leave it reading unwritten bytes.
		patched: append([]string{verify.CodeUninitializedRead}, amkRaces...)},
	{name: "dropped wait on two tiles' counter, permuted ids, unpinned", file: "split_kv_permuted.json",
		edit: func(d map[string]any) {
			w := amkObj(d, "tasks", 4)["waits"].([]any)
			amkObj(d, "tasks", 4)["waits"] = w[1:]
			for _, tk := range d["tasks"].([]any) {
				delete(tk.(map[string]any), "sm")
			}
		},
		patched: amkRaces},
	{name: "dropped wait on the rank-4 KV append", file: "batched.json",
		edit:    func(d map[string]any) { delete(amkObj(d, "tasks", 3), "waits") },
		patched: amkRaces},
	{name: "attention over the row being appended", file: "kv_prior.json",
		edit:    func(d map[string]any) { amkObj(d, "tasks", 2, "params")["kv_len"] = 8 },
		patched: amkRaces},
}

// amkRaces are the race codes a dropped or lowered wait yields (one of
// them is wanted).
var amkRaces = []string{verify.CodeRaceRAW, verify.CodeRaceWAR, verify.CodeRaceWAW}

// findingKey names a finding by its code and tasks.
func findingKey(f verify.ReportFinding) string { return fmt.Sprint(f.Code, f.Tasks) }

// Every documented fix of a faulty AMK program that has an AMK form is a
// JSON Patch on the AMK document: applied (by the RFC 6902 applier of
// patch_test.go) and read again as AMK, the finding is gone and no finding
// appears that the faulty program did not have.
func TestAMKPatchesFixTheirExamples(t *testing.T) {
	patched := 0
	for _, c := range amkFaults {
		t.Run(c.name, func(t *testing.T) {
			b, err := os.ReadFile("../../schedule/amk/testdata/" + c.file)
			if err != nil {
				t.Fatal(err)
			}
			var d map[string]any
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			if safe := verifyBytes(t, b); safe.Verdict != verify.Safe || safe.Format != formatAMK {
				t.Fatalf("%s: %s %s before the edit", c.file, safe.Format, safe.Verdict)
			}
			c.edit(d)
			doc, _ := json.Marshal(d)
			r := verifyBytes(t, doc)
			if r.Verdict != verify.Unsafe || r.Format != formatAMK {
				t.Fatalf("%s %s: %+v", r.Format, r.Verdict, r.Findings)
			}
			before := map[string]bool{}
			for _, f := range r.Findings {
				before[findingKey(f)] = true
			}
			found := map[string]bool{}
			for _, f := range r.Findings {
				if len(f.Patch) == 0 {
					if slices.Contains(c.patched, f.Code) && f.Fix != "" {
						t.Errorf("%s %v (fix %q) has no patch", f.Code, f.Tasks, f.Fix)
					}
					continue
				}
				found[f.Code] = true
				fixed, err := patchedDoc(doc, f.Patch)
				if err != nil {
					t.Fatalf("%s: patch %s: %v", f.Code, patchText(f.Patch), err)
				}
				after := verifyBytes(t, fixed)
				if after.Format != formatAMK || after.Verdict == verify.Invalid || after.Verdict == verify.Inconclusive {
					t.Fatalf("%s: after the patch %s: %s %s %+v", f.Code, patchText(f.Patch), after.Format, after.Verdict, after.Findings)
				}
				for _, g := range after.Findings {
					switch k := findingKey(g); {
					case k == findingKey(f):
						t.Errorf("%s: still there after the patch %s", k, patchText(f.Patch))
					case !before[k]:
						t.Errorf("%s: the patch %s of %s makes a new finding %s: %s", c.name, patchText(f.Patch), findingKey(f), k, g.Message)
					}
				}
				t.Logf("%s %v: %s", f.Code, f.Tasks, patchText(f.Patch))
				patched++
			}
			if !slices.ContainsFunc(c.patched, func(code string) bool { return found[code] }) {
				t.Errorf("no finding of %v with a patch; findings %+v", c.patched, r.Findings)
			}
		})
	}
	if patched < len(amkFaults) {
		t.Errorf("%d patches applied, want at least one per faulty program (%d)", patched, len(amkFaults))
	}
}

// An out-of-bounds access is shrunk to its buffer by its patch: offsets
// past either end, and strided rows, and the patched document verifies
// safe.
func TestBoundsPatches(t *testing.T) {
	const head = `{"format": "megaproof/v1", "launch": {"sms": 4, "workers": 2, "cooperative": true},
 "buffers": [{"name": "x", "kind": "state", "size": 48}], "tasks": [{"name": "t", "worker": 0, `
	for _, c := range []struct{ access, want string }{
		{`"writes": [{"buffer": "x", "offset": 16, "length": 64}]`, `[{"op":"replace","path":"/tasks/0/writes/0/length","value":32}]`},
		{`"reads": [{"buffer": "x", "offset": -8, "length": 16}]`, `[{"op":"replace","path":"/tasks/0/reads/0/length","value":8},{"op":"add","path":"/tasks/0/reads/0/offset","value":0}]`},
		{`"reads": [{"buffer": "x", "offset": -8, "length": 100}]`, `[{"op":"replace","path":"/tasks/0/reads/0/length","value":48},{"op":"add","path":"/tasks/0/reads/0/offset","value":0}]`},
		{`"writes": [{"buffer": "x", "length": 8, "rows": 4, "stride": 16}]`, `[{"op":"replace","path":"/tasks/0/writes/0/rows","value":3}]`},
		{`"writes": [{"buffer": "x", "offset": 8, "length": 8, "rows": 4, "stride": 16}]`, `[{"op":"replace","path":"/tasks/0/writes/0/rows","value":3}]`},
		{`"reads": [{"buffer": "x", "length": 8}], "writes": [{"buffer": "x", "offset": 40, "length": 9}]`, `[{"op":"replace","path":"/tasks/0/writes/0/length","value":8}]`},
	} {
		doc := []byte(head + c.access + `}]}`)
		r := verifyBytes(t, doc)
		if r.Verdict != verify.Unsafe || len(r.Findings) != 1 || r.Findings[0].Code != verify.CodeOutOfBounds {
			t.Fatalf("%s: %s %+v", c.access, r.Verdict, r.Findings)
		}
		f := r.Findings[0]
		if got := patchText(f.Patch); got != c.want {
			t.Errorf("%s: patch %s, want %s", c.access, got, c.want)
		}
		fixed, err := patchedDoc(doc, f.Patch)
		if err != nil {
			t.Fatalf("%s: %v", c.access, err)
		}
		if after := verifyBytes(t, fixed); after.Verdict != verify.Safe {
			t.Errorf("%s: after %s: %s %+v", c.access, patchText(f.Patch), after.Verdict, after.Findings)
		}
	}
	// No byte inside: no patch.
	r := verifyBytes(t, []byte(head+`"writes": [{"buffer": "x", "offset": 48, "length": 8}]}]}`))
	if len(r.Findings) != 1 || len(r.Findings[0].Patch) != 0 {
		t.Errorf("an access wholly outside: %+v", r.Findings)
	}
}

// On an MPK task graph with END's num_triggers above the tasks that
// trigger it, the unsatisfiable wait's patch lowers num_triggers to them:
// applied, the graph verifies safe.
func TestMPKPatches(t *testing.T) {
	for _, c := range []struct {
		file  string
		event int
		value float64
	}{
		// END_OF_TASK_GRAPH (the last event): TERMINATE's wait can never
		// pass. (Too high a num_triggers on another event stalls a worker's
		// queue: a deadlock.cycle, whose fix has no MPK edit.)
		{"ex1_reduce_edge.json", -1, 7},
		{"ex2_chain_partitioned.json", -1, 9},
		{"ex3_fork_interleaved.json", -1, 9},
	} {
		b, err := os.ReadFile("../../schedule/mpk/testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		var d map[string]any
		if err := decodeNumbers(b, &d); err != nil {
			t.Fatal(err)
		}
		evs := d["all_events"].([]any)
		e := c.event
		if e < 0 {
			e = len(evs) - 1
		}
		evs[e].(map[string]any)["num_triggers"] = c.value
		doc, _ := json.Marshal(d)
		r := verifyBytes(t, doc)
		if r.Format != formatMPK || r.Verdict != verify.Unsafe {
			t.Fatalf("%s: %s %s %+v", c.file, r.Format, r.Verdict, r.Findings)
		}
		patched := 0
		for _, f := range r.Findings {
			if f.Code != verify.CodeDeadlockUnsatisfiable {
				if len(f.Patch) > 0 {
					t.Errorf("%s: %s has a patch %s", c.file, f.Code, patchText(f.Patch))
				}
				continue
			}
			if len(f.Patch) == 0 {
				t.Errorf("%s: %s %v has no patch", c.file, f.Code, f.Tasks)
				continue
			}
			fixed, err := patchedDoc(doc, f.Patch)
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			if after := verifyBytes(t, fixed); after.Verdict != verify.Safe {
				t.Errorf("%s: after %s: %s %+v", c.file, patchText(f.Patch), after.Verdict, after.Findings)
			}
			t.Logf("%s: %s %v: %s", c.file, f.Code, f.Tasks, patchText(f.Patch))
			patched++
		}
		if patched == 0 {
			t.Errorf("%s: no deadlock.unsatisfiable patch; findings %+v", c.file, r.Findings)
		}
	}
}

// decodeNumbers decodes JSON keeping numbers as json.Number (MPK's 64-bit
// event ids do not survive float64).
func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}
