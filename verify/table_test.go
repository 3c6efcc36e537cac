package verify

import (
	"context"
	"slices"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

type tb = schedule.Builder

func launch(workers int) schedule.Launch {
	return schedule.Launch{Target: "test", SMs: 8, PerSM: 1, Workers: workers, Cooperative: true}
}

func mustBuild(b *tb) *schedule.Program {
	p, err := b.Build()
	if err != nil {
		panic(err)
	}
	return p
}

type row struct {
	name   string
	reason string
	build  func() *schedule.Program
	want   []string // codes; nil means safe
}

func codes(r *Result) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Code)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func runTable(t *testing.T, rows []row) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			p := r.build()
			res, err := Run(context.Background(), p, Config{Sanity: true})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			got := codes(res)
			if !slices.Equal(got, r.want) {
				t.Errorf("%s: codes %v, want %v\nfindings: %+v", r.reason, got, r.want, res.Findings)
			}
			if len(r.want) == 0 && res.Verdict != Safe {
				t.Errorf("verdict %v, want safe", res.Verdict)
			}
		})
	}
}

func TestDeadlockTable(t *testing.T) {
	pair := func(thr uint64, signals int) func() *schedule.Program {
		return func() *schedule.Program {
			b := schedule.NewBuilder("t", launch(2))
			c := b.Counter("c")
			p := b.Task("p").On(0)
			for i := 0; i < signals; i++ {
				p.Signal(c, 1)
			}
			b.Task("q").On(1).Wait(c, thr)
			return mustBuild(b)
		}
	}
	selfWait := func(wait bool) func() *schedule.Program {
		return func() *schedule.Program {
			b := schedule.NewBuilder("t", launch(1))
			c := b.Counter("c")
			d := b.Counter("d")
			tk := b.Task("t").On(0).Signal(c, 1)
			if wait {
				tk.Wait(c, 1)
			} else {
				tk.Wait(d, 1)
				b.Task("u").On(0).Signal(d, 1)
				b.Task("v").On(0).Wait(c, 1)
				return mustBuild(withInitD(b, d))
			}
			return mustBuild(b)
		}
	}
	_ = selfWait
	crossQueue := func(swap bool) func() *schedule.Program {
		return func() *schedule.Program {
			b := schedule.NewBuilder("t", launch(2))
			c1, c2 := b.Counter("c1"), b.Counter("c2")
			// worker 0: A (signal c1) then D (wait c2); worker 1: B (wait c1) then C (signal c2)
			if !swap {
				b.Task("A").On(0).Signal(c1, 1)
				b.Task("D").On(0).Wait(c2, 1)
			} else {
				b.Task("D").On(0).Wait(c2, 1)
				b.Task("A").On(0).Signal(c1, 1)
			}
			b.Task("B").On(1).Wait(c1, 1)
			b.Task("C").On(1).Signal(c2, 1)
			return mustBuild(b)
		}
	}
	barrier := func(parties int, bothSync bool) func() *schedule.Program {
		return func() *schedule.Program {
			b := schedule.NewBuilder("t", launch(2))
			br := b.Barrier("b", parties)
			b.Task("A").On(0).Sync(br)
			b.Task("A2").On(0).Sync(br)
			b.Task("B").On(1).Sync(br)
			if bothSync {
				b.Task("B2").On(1).Sync(br)
			}
			return mustBuild(b)
		}
	}
	phases := func(second uint64) func() *schedule.Program {
		return func() *schedule.Program {
			b := schedule.NewBuilder("t", launch(3))
			c, d := b.Counter("c"), b.Counter("d")
			x := b.Buffer("x", schedule.KindScratch, 8)
			y := b.Buffer("y", schedule.KindOutput, 8)
			b.Task("p1").On(0).Write(x, 0, 4).Signal(c, 1)
			b.Task("p2").On(1).Write(x, 4, 4).Signal(c, 1)
			b.Task("mid").On(2).Wait(c, 2).Read(x, 0, 8).Signal(d, 1)
			b.Task("q1").On(0).Wait(d, 1).Write(x, 0, 4).Signal(c, 1)
			b.Task("q2").On(1).Wait(d, 1).Write(x, 4, 4).Signal(c, 1)
			b.Task("end").On(2).Wait(c, second).Read(x, 0, 8).Write(y, 0, 8)
			return mustBuild(b)
		}
	}
	runTable(t, []row{
		{"threshold-ok", "two signals reach 2", pair(2, 2), nil},
		{"unsatisfiable", "threshold 3 above the 2 signals", pair(3, 2), []string{CodeDeadlockUnsatisfiable}},
		{"self-wait", "a task waits on a signal it sends after its body", selfWait(true), []string{CodeDeadlockCycle}},
		{"queue-order-ok", "producer before waiter in each queue", crossQueue(false), nil},
		{"queue-order-cycle", "static queue order creates a cross-worker cycle", crossQueue(true), []string{CodeDeadlockCycle}},
		{"barrier-even", "both sync twice", barrier(2, true), nil},
		{"barrier-uneven", "worker 1 syncs once", barrier(2, false), []string{CodeDeadlockBarrier}},
		{"barrier-parties", "three parties, two participants", barrier(3, true), []string{CodeDeadlockBarrier}},
		{"phases-2-4", "a counter reused across phases with thresholds 2 then 4", phases(4), nil},
		{"phases-2-2", "the second phase reuses threshold 2", phases(2), []string{CodeRaceRAW}},
	})
}

func withInitD(b *tb, d schedule.CounterRef) *tb { return b }
