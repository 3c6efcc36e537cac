package mpk_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/mpk"
	"github.com/megaproof/megaproof/verify"
)

// In history_dangling_writer.json, positions 2 and 4-10 trigger END
// (num_triggers 8) and position 3 writes X without a trigger (MPK #665's
// kind of leaf). With 128 workers and 16 schedulers, scheduler 0 places
// positions 2-9 on workers 1-7 and 0 and scheduler 1 places position 10
// on worker 8. The default history gives END(1) to scheduler 1 (the
// worker of position 10), scheduler 0's cursor does not move, t3@2 shares
// t3@1's worker and the FIFO queue orders them. When a task of scheduler
// 0 ends iteration 1 instead, scheduler 0 pushes BEGIN(2) first, t3@2
// lands on the next worker, and nothing orders the two writes of X.
func TestHistoriesDanglingWriter(t *testing.T) {
	data := read(t, "history_dangling_writer.json")
	g, err := mpk.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := mpk.Options{}.Histories(g)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(hs, [][]int{{1}, {0}}, slices.Equal) {
		t.Fatalf("histories %v, want [[1] [0]]", hs)
	}
	_, res := run(t, data, mpk.Options{})
	if res.Verdict != verify.Safe {
		t.Fatalf("default history: %v %v, want safe", res.Verdict, res.Findings)
	}
	p, res := run(t, data, mpk.Options{History: hs[1]})
	if res.Verdict != verify.Unsafe {
		t.Fatalf("history %v: %v, want unsafe", hs[1], res.Verdict)
	}
	found := false
	for _, f := range res.Findings {
		if f.Code == verify.CodeRaceWAW && names(p, f, []string{"t3.IDENTITY@1", "t3.IDENTITY@2"}) {
			found = true
			if err := schedule.CheckWitness(p, f.Code, f.Tasks, f.Witness); err != nil {
				t.Errorf("witness does not replay: %v", err)
			}
		}
	}
	if !found {
		t.Errorf("no race.waw of t3@1 and t3@2 in %v", res.Findings)
	}
	ps, err := mpk.Options{}.Programs(g)
	if err != nil || len(ps) != 2 {
		t.Fatalf("Programs: %d programs, %v; want 2", len(ps), err)
	}
	for i, want := range []verify.Verdict{verify.Safe, verify.Unsafe} {
		res, err := verify.Run(context.Background(), ps[i], verify.Config{})
		if err != nil || res.Verdict != want {
			t.Errorf("program %d of Programs: %v %v, want %v", i, res.Verdict, err, want)
		}
	}
}

// With the dangling writer at position 2, scheduler 0's cursor puts
// BEGIN(2) right behind t2@1 on its worker when scheduler 0 ends
// iteration 1, and t2@2 on that worker otherwise: both histories order
// the writes.
func TestHistoriesDanglingFirst(t *testing.T) {
	data := read(t, "history_dangling_first.json")
	g, err := mpk.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := mpk.Options{}.Histories(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 {
		t.Fatalf("histories %v, want two", hs)
	}
	for _, h := range hs {
		if _, res := run(t, data, mpk.Options{History: h}); res.Verdict != verify.Safe {
			t.Errorf("history %v: %v %v, want safe", h, res.Verdict, res.Findings)
		}
	}
}

// Graphs in which every task must run before END give one verdict for
// every history: Histories lists none, and every history the END
// triggers allow verifies like the default one.
func TestHistoriesIndependent(t *testing.T) {
	for _, name := range []string{"ex1_reduce_edge.json", "ex2_chain_partitioned.json", "ex3_fork_interleaved.json", "ex4_stripped_residual_hazard.json"} {
		data := read(t, name)
		g, err := mpk.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []mpk.Options{{}, {Iterations: 3}, {Workers: 4, Schedulers: 2}, {Workers: 4, Schedulers: 2, Iterations: 3}} {
			hs, err := o.Histories(g)
			if err != nil || hs != nil {
				t.Fatalf("%s %+v: histories %v, %v; want none", name, o, hs, err)
			}
			_, want := run(t, data, o)
			schedulers := o.Schedulers
			if schedulers == 0 {
				schedulers = mpk.DefaultSchedulers(mpk.DefaultSMs, mpk.DefaultWorkers(mpk.DefaultSMs))
			}
			for s := range min(schedulers, 4) {
				h := make([]int, max(o.Iterations, 2)-1)
				for i := range h {
					h[i] = s
				}
				o.History = h
				if _, got := run(t, data, o); got.Verdict != want.Verdict || !slices.Equal(codes(got), codes(want)) {
					t.Errorf("%s %+v: %v %v, default history %v %v", name, o, got.Verdict, codes(got), want.Verdict, codes(want))
				}
			}
		}
	}
}

// Options.History is checked like every other option.
func TestHistoryOption(t *testing.T) {
	data := read(t, "ex1_reduce_edge.json")
	for _, o := range []mpk.Options{{History: []int{16}}, {History: []int{-1}}, {History: []int{0, 0}}, {History: []int{0}, Dispatch: mpk.Dynamic}} {
		_, err := o.Unmarshal(data)
		if err == nil || !strings.Contains(err.Error(), "Options.History") {
			t.Errorf("%+v: %v, want an Options.History error", o, err)
		}
	}
}

func codes(r *verify.Result) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Code)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// A graph whose keys are escaped (\u0061ll_events, all_t\u0061sks,
// dependent\u005fevent) is an MPK graph like any other: detected, read
// and verified (its two tasks race on y).
func TestEscapedKeys(t *testing.T) {
	data := read(t, "escaped_keys_race.json")
	if !mpk.Detect(data) {
		t.Fatal("not detected as MPK")
	}
	p, res := run(t, data, mpk.Options{})
	found := false
	for _, f := range res.Findings {
		found = found || f.Code == verify.CodeRaceRAW && names(p, f, []string{"t2.IDENTITY@1", "t3.IDENTITY@1"})
	}
	if !found {
		t.Errorf("no race.raw of t2@1 and t3@1 in %v", res.Findings)
	}
}
