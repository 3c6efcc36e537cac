package mpk_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/mpk"
	"github.com/megaproof/megaproof/verify"
)

const (
	ex1 = "ex1_reduce_edge.json"
	ex2 = "ex2_chain_partitioned.json"
	ex3 = "ex3_fork_interleaved.json"
	ex4 = "ex4_stripped_residual_hazard.json"
)

// num is a JSON number as the edited documents hold them.
func num(v int64) json.Number { return json.Number(strings.TrimSpace(string(mustJSON(v)))) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// wide builds a graph of three layers of 96 tasks each (290 tasks), so
// that MPK's default 128 workers all get tasks.
func wide(t testing.TB) []byte {
	op := func(n string, d int) mpk.Operand { return mpk.Operand{Tensor: n, Dim: d} }
	b := mpk.NewBuilder()
	for _, n := range []string{"in", "y", "z", "out"} {
		b.Tensor(n, mpk.DTBF16, 1, 96*64)
	}
	b.Layer(mpk.TaskIdentity, 96, []mpk.Operand{op("in", 1)}, []mpk.Operand{op("y", 1)})
	b.Layer(mpk.TaskIdentity, 96, []mpk.Operand{op("y", mpk.Whole)}, []mpk.Operand{op("z", 1)})
	b.Layer(mpk.TaskIdentity, 96, []mpk.Operand{op("z", 1)}, []mpk.Operand{op("out", 1)})
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return mpk.Marshal(g)
}

// TestVerdicts maps MPK graphs and verifies them: the hand-derived examples 1-3
// are safe and example 4 races on the stripped residual; one edit of a
// file (or one option the file does not record) injects each bug class
// the model expresses, and yields its finding. Every witness replays.
func TestVerdicts(t *testing.T) {
	cases := []struct {
		name, file string
		data       func(t testing.TB) []byte // instead of file
		edit       func(doc map[string]any)
		opts       mpk.Options
		verdict    verify.Verdict
		codes      []string // one of these must be found (unsafe only)
		tasks      []string // prefixes of task names some finding must name
	}{
		{name: "reduction edge", file: ex1, verdict: verify.Safe},
		{name: "partitioned chain", file: ex2, verdict: verify.Safe},
		{name: "fork, interleaved", file: ex3, verdict: verify.Safe},
		{
			name: "stripped residual", file: ex4, verdict: verify.Unsafe,
			codes: []string{verify.CodeRaceRAW}, tasks: []string{"t3.", "t6."},
		},
		{name: "examples 1-3 dynamic", file: ex2, opts: mpk.Options{Dispatch: mpk.Dynamic}, verdict: verify.Safe},
		{name: "fork dynamic, 5 iterations", file: ex3, opts: mpk.Options{Dispatch: mpk.Dynamic, Iterations: 5}, verdict: verify.Safe},
		{
			name: "stripped residual, dynamic", file: ex4, opts: mpk.Options{Dispatch: mpk.Dynamic}, verdict: verify.Unsafe,
			codes: []string{verify.CodeRaceRAW}, tasks: []string{"t2.", "t7."},
		},
		{
			// One worker runs every task in position order: the race of
			// example 4 is hidden in that one assignment, and found in
			// every-assignment mode.
			name: "stripped residual, one worker", file: ex4, opts: mpk.Options{Workers: 1, Schedulers: 1}, verdict: verify.Safe,
		},
		{
			name: "stripped residual, one worker, dynamic", file: ex4, opts: mpk.Options{Workers: 1, Schedulers: 1, Dispatch: mpk.Dynamic},
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceRAW},
		},
		{name: "one iteration", file: ex1, opts: mpk.Options{Iterations: 1}, verdict: verify.Safe},
		{name: "rank 1 of 2, local events only", file: ex2, edit: rank(1), verdict: verify.Safe},

		// Residency of the scheduler blocks (MPK #761).
		{name: "wide graph, schedulers beside workers", data: wide, verdict: verify.Safe},
		{
			name: "wide graph, schedulers take SMs", data: wide, opts: mpk.Options{Residency: mpk.Exclusive},
			verdict: verify.Unsafe, codes: []string{verify.CodeOccupancy},
		},
		{
			name: "chain on 6 SMs, 8 workers and 2 schedulers taking SMs", file: ex2,
			opts: mpk.Options{SMs: 6, Workers: 8, Schedulers: 2, Residency: mpk.Exclusive}, verdict: verify.Unsafe,
			codes: []string{verify.CodeOccupancy},
		},
		{
			name: "chain on 10 SMs, 8 workers and 2 schedulers taking SMs", file: ex2,
			opts: mpk.Options{SMs: 10, Workers: 8, Schedulers: 2, Residency: mpk.Exclusive}, verdict: verify.Safe,
		},
		{
			name: "more workers than SMs", data: wide, opts: mpk.Options{SMs: 100, Workers: 128, Schedulers: 16},
			verdict: verify.Unsafe, codes: []string{verify.CodeOccupancy},
		},

		// A dropped edge.
		{
			name: "dropped dependent event", file: ex2,
			edit:    func(d map[string]any) { obj(d, "all_tasks", 8)["dependent_event"] = num(mpk.InvalidEventID) },
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceRAW}, tasks: []string{"t6.", "t8."},
		},
		{
			name: "wait on the wrong event", file: ex2,
			edit:    func(d map[string]any) { obj(d, "all_tasks", 7)["dependent_event"] = num(2) },
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceRAW}, tasks: []string{"t5.", "t7."},
		},

		// A reused buffer without a write-after-read edge (MPK builds
		// read-after-write edges only).
		{
			name: "fork branch reuses its input", file: ex3,
			edit:    func(d map[string]any) { obj(d, "all_tasks", 5, "outputs", 0)["base_ptr"] = "y" },
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceWAR}, tasks: []string{"t4.", "t5."},
		},
		{
			name: "reuse ordered by a data path", file: ex2,
			edit:    func(d map[string]any) { obj(d, "all_tasks", 8, "outputs", 0)["base_ptr"] = "y" },
			verdict: verify.Safe,
		},

		// A wrong num_triggers.
		{
			name: "num_triggers too low", file: ex1,
			edit:    func(d map[string]any) { obj(d, "all_events", 2)["num_triggers"] = num(3) },
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceRAW},
		},
		{
			name: "num_triggers too high", file: ex1,
			edit:    func(d map[string]any) { obj(d, "all_events", 2)["num_triggers"] = num(5) },
			verdict: verify.Unsafe, codes: []string{verify.CodeDeadlockCycle, verify.CodeDeadlockUnsatisfiable},
		},
		{
			name: "num_triggers zero", file: ex1,
			edit:    func(d map[string]any) { obj(d, "all_events", 2)["num_triggers"] = num(0) },
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceRAW},
		},
		{
			name: "END num_triggers too low", file: ex1,
			edit:    func(d map[string]any) { obj(d, "all_events", 3)["num_triggers"] = num(1) },
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceWAW, verify.CodeRaceWAR, verify.CodeRaceRAW},
		},
		{
			name: "END num_triggers too high", file: ex3,
			edit:    func(d map[string]any) { obj(d, "all_events", 4)["num_triggers"] = num(5) },
			verdict: verify.Unsafe, codes: []string{verify.CodeDeadlockCycle, verify.CodeDeadlockUnsatisfiable},
		},
		{
			// MPK #665: a leaf without a trigger never counts toward END.
			name: "leaf without trigger", file: ex3,
			edit:    func(d map[string]any) { obj(d, "all_tasks", 7)["trigger_event"] = num(mpk.InvalidEventID) },
			verdict: verify.Unsafe, codes: []string{verify.CodeDeadlockCycle, verify.CodeDeadlockUnsatisfiable},
		},

		// Queue capacities (MPK #464): worker 0 of one holds BEGIN and all
		// six tasks.
		{name: "queue of 8, 7 entries", file: ex1, opts: mpk.Options{Workers: 1, Schedulers: 1, WorkerQueueLen: 8}, verdict: verify.Safe},
		{
			name: "queue of 7, 7 entries", file: ex1, opts: mpk.Options{Workers: 1, Schedulers: 1, WorkerQueueLen: 7},
			verdict: verify.Unsafe, codes: []string{verify.CodeCounterOverflow},
		},
		{
			name: "queue of 7, dynamic", file: ex1, opts: mpk.Options{Workers: 1, Schedulers: 1, WorkerQueueLen: 7, Dispatch: mpk.Dynamic},
			verdict: verify.Unsafe, codes: []string{verify.CodeCounterOverflow},
		},
		{
			name: "queue of 7, schedulers taking SMs", file: ex1, opts: mpk.Options{SMs: 2, Workers: 1, Schedulers: 1, WorkerQueueLen: 7, Residency: mpk.Exclusive},
			verdict: verify.Unsafe, codes: []string{verify.CodeCounterOverflow},
		},
		{
			// A scheduler without positions lags in the broadcast queue.
			name: "idle scheduler, 3 iterations of a queue of 3", file: ex1, opts: mpk.Options{Iterations: 3, SchedulerQueueLen: 3},
			verdict: verify.Unsafe, codes: []string{verify.CodeCounterOverflow},
		},
		{name: "idle scheduler, 2 iterations of a queue of 3", file: ex1, opts: mpk.Options{Iterations: 2, SchedulerQueueLen: 3}, verdict: verify.Safe},

		// Footprints.
		{
			name: "tile before its tensor", file: ex2,
			edit:    func(d map[string]any) { obj(d, "all_tasks", 2, "outputs", 0)["offset"] = num(-2) },
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			name: "declared tensor size", file: ex2, opts: mpk.Options{Tensors: map[string]mpk.TensorInfo{"out": {Size: 256}}},
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			name: "aliased tensors", file: ex3, opts: mpk.Options{Tensors: map[string]mpk.TensorInfo{"q": {Arena: "a"}, "r": {Arena: "a"}}},
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceWAW},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			switch {
			case tc.data != nil:
				data = tc.data(t)
			case tc.edit != nil:
				data = edit(t, tc.file, tc.edit)
			default:
				data = read(t, tc.file)
			}
			p, res := run(t, data, tc.opts)
			if res.Verdict != tc.verdict {
				t.Fatalf("verdict %v, want %v; findings: %v", res.Verdict, tc.verdict, res.Findings)
			}
			if tc.verdict != verify.Unsafe {
				return
			}
			found := false
			for _, f := range res.Findings {
				if slices.Contains(tc.codes, f.Code) && names(p, f, tc.tasks) {
					found = true
				}
				if len(f.Witness) > 0 {
					if err := schedule.CheckWitness(p, f.Code, f.Tasks, f.Witness); err != nil {
						t.Errorf("%s witness does not replay: %v", f.Code, err)
					}
				}
			}
			if !found {
				t.Errorf("no finding of %v naming %v in %v", tc.codes, tc.tasks, res.Findings)
			}
		})
	}
}

// names reports whether a finding names a task with each prefix.
func names(p *schedule.Program, f verify.Finding, prefixes []string) bool {
	for _, pre := range prefixes {
		if !slices.ContainsFunc(f.Tasks, func(i int) bool { return strings.HasPrefix(p.Tasks[i].Name, pre) }) {
			return false
		}
	}
	return true
}

// rank rewrites every event id as rank r's local id.
func rank(r int64) func(doc map[string]any) {
	return func(d map[string]any) {
		for _, tn := range at(d, "all_tasks").([]any) {
			task := tn.(map[string]any)
			for _, k := range []string{"dependent_event", "trigger_event"} {
				v, _ := task[k].(json.Number).Int64()
				if v != mpk.InvalidEventID {
					task[k] = num(r<<32 | v)
				}
			}
		}
	}
}
