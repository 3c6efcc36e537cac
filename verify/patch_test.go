package verify

import (
	"slices"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// mustFollow marks what cannot start before a task has finished: the
// tasks queued after it on its worker, the waiters whose threshold the
// other signals cannot reach, transitively, and nothing else.
func TestMustFollow(t *testing.T) {
	sig := func(c int32) []schedule.Step { return []schedule.Step{{Kind: schedule.Signal, Object: c, Value: 1}} }
	wait := func(c int32, k uint64) []schedule.Step {
		return []schedule.Step{{Kind: schedule.Wait, Object: c, Value: k}}
	}
	p := &schedule.Program{
		Counters: []schedule.Counter{{Name: "a"}, {Name: "b"}, {Name: "c", Init: 1}, {Name: "d"}},
		Tasks: []schedule.Task{
			{Name: "A", Worker: 0, After: sig(0)},                                                                        // 0
			{Name: "B", Worker: 0, After: sig(1)},                                                                        // 1: after A on worker 0
			{Name: "C", Worker: schedule.Dynamic, Before: wait(1, 1)},                                                    // 2: needs B
			{Name: "D", Worker: schedule.Dynamic, Before: wait(0, 1)},                                                    // 3: needs A
			{Name: "E", Worker: 1, Before: wait(2, 2), After: sig(3)},                                                    // 4: init 1 + F's signal
			{Name: "F", Worker: schedule.Dynamic, Before: wait(0, 1), After: sig(2)},                                     // 5: needs A
			{Name: "G", Worker: 1, Before: wait(3, 1)},                                                                   // 6: needs E
			{Name: "H", Worker: schedule.Dynamic, Before: wait(2, 1)},                                                    // 7: init suffices
			{Name: "I", Worker: schedule.Dynamic, Before: []schedule.Step{{Kind: schedule.Signal, Object: 0, Value: 1}}}, // 8: signals a before its body
		},
	}
	marked := func(b int) []string {
		var names []string
		for i, m := range mustFollow(p, b) {
			if m {
				names = append(names, p.Tasks[i].Name)
			}
		}
		return names
	}
	// A's signal is not the only one on a: I signals it too, so D and F
	// need not wait for A.
	if got, want := marked(0), []string{"A", "B", "C"}; !slices.Equal(got, want) {
		t.Errorf("after A: %v, want %v", got, want)
	}
	if got, want := marked(5), []string{"E", "F", "G"}; !slices.Equal(got, want) {
		t.Errorf("after F: %v, want %v", got, want)
	}
	// I signals a before its body: D and F may start before I finishes.
	if got, want := marked(8), []string{"I"}; !slices.Equal(got, want) {
		t.Errorf("after I: %v, want %v", got, want)
	}
	p.Tasks[8].Before = nil // without I, A is a's only signaller
	if got, want := marked(0), []string{"A", "B", "C", "D", "E", "F", "G"}; !slices.Equal(got, want) {
		t.Errorf("after A, its only signaller: %v, want %v", got, want)
	}
}

// A three-semaphore inversion: the patch sorts every stuck task's run of
// acquires by semaphore and moves nothing else; applied, the program is
// safe. Tasks whose acquires are in order already get no patch.
func TestLockOrderPatch(t *testing.T) {
	acq := func(objs ...int32) []schedule.Step {
		var s []schedule.Step
		for _, o := range objs {
			s = append(s, schedule.Step{Kind: schedule.Acquire, Object: o, Value: 1})
		}
		return s
	}
	rel := func(objs ...int32) []schedule.Step {
		var s []schedule.Step
		for _, o := range objs {
			s = append(s, schedule.Step{Kind: schedule.Release, Object: o, Value: 1})
		}
		return s
	}
	p := &schedule.Program{
		Launch:     schedule.Launch{SMs: 3, PerSM: 1, Workers: 3, Cooperative: true},
		Semaphores: []schedule.Semaphore{{Name: "s", Tokens: 1}, {Name: "t", Tokens: 1}, {Name: "u", Tokens: 1}},
		Tasks: []schedule.Task{
			{Name: "a", Worker: 0, Before: acq(0, 1, 2), After: rel(2, 1, 0)},
			{Name: "b", Worker: 1, Before: append(acq(2, 0, 1), schedule.Step{Kind: schedule.Fence}), After: rel(0, 1, 2)},
			{Name: "c", Worker: 2, Before: acq(1, 2), After: rel(1, 2)},
		},
	}
	if lockOrderPatch(p, []int{0}) != nil {
		t.Error("a task acquiring in order got a patch")
	}
	// A run out of order longer than maxSortedAcquires gets none.
	long := &schedule.Program{Tasks: []schedule.Task{{Name: "x"}}}
	for o := maxSortedAcquires; o >= 0; o-- {
		long.Tasks[0].Before = append(long.Tasks[0].Before, schedule.Step{Kind: schedule.Acquire, Object: int32(o), Value: 1})
	}
	if ops := lockOrderPatch(long, []int{0}); ops != nil {
		t.Errorf("a reversed run of %d acquires got %d moves", maxSortedAcquires+1, len(ops))
	}
	long.Tasks[0].Before = long.Tasks[0].Before[1:]
	if ops := lockOrderPatch(long, []int{0}); len(ops) != maxSortedAcquires-1 {
		t.Errorf("a reversed run of %d acquires got %d moves, want %d", maxSortedAcquires, len(ops), maxSortedAcquires-1)
	}
	ops := lockOrderPatch(p, []int{1, 2, 1})
	want := []PatchOp{{Op: "move", From: "/tasks/1/before/1", Path: "/tasks/1/before/0"}, {Op: "move", From: "/tasks/1/before/2", Path: "/tasks/1/before/1"}}
	if len(ops) != len(want) {
		t.Fatalf("ops %+v, want %+v", ops, want)
	}
	for i := range ops {
		if ops[i].Op != want[i].Op || ops[i].From != want[i].From || ops[i].Path != want[i].Path || ops[i].Value != nil {
			t.Fatalf("ops %+v, want %+v", ops, want)
		}
	}
	// Applied: b acquires s, t, u, then fences.
	q := p.Clone()
	b := q.Tasks[1].Before
	q.Tasks[1].Before = []schedule.Step{b[1], b[2], b[0], b[3]}
	for _, tc := range []struct {
		p    *schedule.Program
		safe bool
	}{{p, false}, {q, true}} {
		r, err := Run(t.Context(), tc.p, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if (r.Verdict == Safe) != tc.safe {
			t.Errorf("verdict %v, want safe %v: %v", r.Verdict, tc.safe, r.Findings)
		}
	}
}
