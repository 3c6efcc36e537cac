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
