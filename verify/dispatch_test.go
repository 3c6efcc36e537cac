package verify

import (
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// Rows for the two hardware rules: cta scope across workers, and dynamic
// tasks running on the launch's finite workers. Each unsafe row has a
// one-edit safe twin.
func TestScopeAndDispatch(t *testing.T) {
	cta := schedule.WithScope(schedule.ScopeCTA)
	handoff := func(consumer int, opts ...schedule.StepOption) func() *schedule.Program {
		return func() *schedule.Program {
			b := schedule.NewBuilder("handoff", launch(2))
			c := b.Counter("c")
			b.Task("producer").On(0).Signal(c, 1)
			b.Task("consumer").On(consumer).Wait(c, 1, opts...)
			return mustBuild(b)
		}
	}
	pool := func(workers, tasks int) func() *schedule.Program {
		return func() *schedule.Program {
			l := launch(workers)
			l.SMs = max(l.SMs, workers)
			b := schedule.NewBuilder("pool", l)
			br := b.Barrier("b", tasks)
			for i := range tasks {
				b.Task(string(rune('a' + i))).Sync(br)
			}
			return mustBuild(b)
		}
	}
	runTable(t, []row{
		{name: "cta-wait-across-workers", reason: "a cta-scoped spin never sees another SM's signal", build: handoff(1, cta), want: []string{CodeRaceScope}},
		{name: "cta-wait-same-worker", reason: "within one worker a cta scope suffices", build: handoff(0, cta)},
		{name: "gpu-wait-across-workers", reason: "gpu scope reaches across workers", build: handoff(1)},
		{name: "cta-signal-across-workers", reason: "a cta-scoped signal is a race with the other worker's wait", build: func() *schedule.Program {
			b := schedule.NewBuilder("cta-signal", launch(2))
			c := b.Counter("c")
			b.Task("producer").On(0).Signal(c, 1, cta)
			b.Task("consumer").On(1).Wait(c, 1)
			return mustBuild(b)
		}, want: []string{CodeRaceScope}},
		{name: "cta-after-gpu-handoff", reason: "the cta-scoped wait is reached only after a gpu handoff from the signal's thread", build: func() *schedule.Program {
			b := schedule.NewBuilder("ordered", launch(2))
			c, d := b.Counter("c"), b.Counter("d")
			b.Task("p").On(0).Signal(c, 1, cta).Signal(d, 1)
			b.Task("q").On(1).Wait(d, 1).Wait(c, 1, cta)
			return mustBuild(b)
		}},
		{name: "cta-dynamic", reason: "a dynamic task's worker is unknown", build: func() *schedule.Program {
			b := schedule.NewBuilder("cta-dynamic", launch(2))
			c := b.Counter("c")
			b.Task("producer").Signal(c, 1)
			b.Task("consumer").On(1).Wait(c, 1, cta)
			return mustBuild(b)
		}, want: []string{CodeRaceScope}},
		{name: "dynamic-barrier-pool", reason: "two tasks at the barrier hold both workers; the third has none", build: pool(2, 3), want: []string{CodeOccupancy}},
		{name: "dynamic-barrier-pool-enough", reason: "three workers hold all three", build: pool(3, 3)},
		{name: "dynamic-barrier-pool-200-on-132", reason: "too large for the explorer: the adversarial dispatch finds 132 syncs holding every worker", build: pool(132, 200), want: []string{CodeInconclusive, CodeOccupancy}},
		{name: "dynamic-barrier-pool-200-on-200", reason: "as many workers as tasks that block: a worker is free for every claim", build: pool(200, 200)},
		{name: "dynamic-simple-mixed", reason: "a spinning worker runs the simple task its wait needs", build: func() *schedule.Program {
			b := schedule.NewBuilder("mixed", launch(1))
			c := b.Counter("c")
			b.Task("static").On(0).Wait(c, 1)
			b.Task("dyn").Signal(c, 1)
			return mustBuild(b)
		}},
		{name: "dynamic-guard", reason: "a claim needs the whole guard: the first wait observes both signals", build: func() *schedule.Program {
			b := schedule.NewBuilder("guard", launch(3))
			c, d := b.Counter("c"), b.Counter("d")
			x := b.Buffer("x", schedule.KindState, 8)
			// The first signal of c is relaxed, the second releases after
			// the write; d comes after both, so a claim observes the release.
			b.Task("w").On(0).Signal(c, 1, schedule.Relaxed()).Write(x, 0, 8).Signal(c, 1).Signal(d, 1)
			b.Task("r").Wait(c, 1).Wait(d, 1).Read(x, 0, 8)
			return mustBuild(b)
		}},
		{name: "dynamic-guard-one-wait", reason: "with a guard of one wait the claim may follow the relaxed signal alone: ordered in time, not by happens-before", build: func() *schedule.Program {
			b := schedule.NewBuilder("guard1", launch(3))
			c := b.Counter("c")
			x := b.Buffer("x", schedule.KindState, 8)
			b.Task("w").On(0).Signal(c, 1, schedule.Relaxed()).Write(x, 0, 8).Signal(c, 1)
			b.Task("r").Wait(c, 1).Read(x, 0, 8)
			return mustBuild(b)
		}, want: []string{CodeRaceUnsynchronized}},
		{name: "worker-exit", reason: "the empty worker stays resident while the dynamic task remains, so its producer never starts", build: func() *schedule.Program {
			b := schedule.NewBuilder("exit", schedule.Launch{Target: "test", SMs: 1, PerSM: 1, Workers: 2})
			c := b.Counter("c")
			b.Task("producer").On(1).Signal(c, 1)
			b.Task("dyn").Wait(c, 1)
			return mustBuild(b)
		}, want: []string{CodeOccupancy}},
	})
}
