package schedule_test

import (
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// StepSource maps every operation of the normal form back to its step:
// a Sync's Arrive and Await to one step, bodies to step -1, across static
// and dynamic threads.
func TestStepSource(t *testing.T) {
	b := schedule.NewBuilder("steps", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	c := b.Counter("c")
	g := b.Barrier("g", 2)
	b.Task("a").On(0).Sync(g).Signal(c, 1).FenceAfter(schedule.ScopeGPU).SyncAfter(g)
	b.Task("b").On(1).Sync(g).Wait(c, 1).SyncAfter(g)
	b.Task("d").Wait(c, 1).Signal(c, 1) // dynamic
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	form := schedule.Lower(p)
	type src struct {
		task  int
		after bool
		step  int
	}
	want := [][]src{
		// a: sync (arrive, await), begin, end, signal, fence, sync (arrive, await)
		{{0, false, 0}, {0, false, 0}, {0, false, -1}, {0, false, -1}, {0, true, 0}, {0, true, 1}, {0, true, 2}, {0, true, 2}},
		// b: sync (arrive, await), wait, begin, end, sync (arrive, await)
		{{1, false, 0}, {1, false, 0}, {1, false, 1}, {1, false, -1}, {1, false, -1}, {1, true, 0}, {1, true, 0}},
		// d: wait, begin, end, signal
		{{2, false, 0}, {2, false, -1}, {2, false, -1}, {2, true, 0}},
	}
	if len(form.Threads) != len(want) {
		t.Fatalf("%d threads", len(form.Threads))
	}
	for th, ops := range want {
		if len(form.Threads[th].Ops) != len(ops) {
			t.Fatalf("thread %d: %d ops, want %d", th, len(form.Threads[th].Ops), len(ops))
		}
		for s, w := range ops {
			task, after, step, ok := form.StepSource(p, th, s)
			if !ok || (src{task, after, step}) != w {
				t.Errorf("thread %d op %d (%s): %d %v %d %v, want %+v", th, s, form.Threads[th].Ops[s].Kind, task, after, step, ok, w)
			}
			if w.step >= 0 {
				steps := p.Tasks[task].Before
				if after {
					steps = p.Tasks[task].After
				}
				if step >= len(steps) {
					t.Errorf("thread %d op %d: step %d of %d", th, s, step, len(steps))
				}
			}
		}
	}
	for _, bad := range [][2]int{{-1, 0}, {3, 0}, {0, -1}, {0, 8}} {
		if _, _, _, ok := form.StepSource(p, bad[0], bad[1]); ok {
			t.Errorf("StepSource(%d, %d) is ok", bad[0], bad[1])
		}
	}
	if got := (schedule.Paths{}).StepPath(2, true, 0); got != "$.tasks[2].after[0]" {
		t.Errorf("StepPath = %s", got)
	}
}
