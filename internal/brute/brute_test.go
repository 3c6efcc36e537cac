package brute_test

import (
	"slices"
	"testing"

	"github.com/megaproof/megaproof/internal/brute"
	"github.com/megaproof/megaproof/schedule"
)

func TestFamilies(t *testing.T) {
	coop := func(w int) schedule.Launch {
		return schedule.Launch{SMs: 8, PerSM: 1, Workers: w, Cooperative: true}
	}
	cta := schedule.WithScope(schedule.ScopeCTA)
	for _, tc := range []struct {
		name  string
		build func(b *schedule.Builder)
		l     schedule.Launch
		want  []string
	}{
		{"cta-wait-across-workers", func(b *schedule.Builder) {
			c := b.Counter("c")
			b.Task("p").On(0).Signal(c, 1)
			b.Task("q").On(1).Wait(c, 1, cta)
		}, coop(2), []string{"race"}},
		{"cta-wait-same-worker", func(b *schedule.Builder) {
			c := b.Counter("c")
			b.Task("p").On(0).Signal(c, 1)
			b.Task("q").On(0).Wait(c, 1, cta)
		}, coop(2), nil},
		{"barrier-pool-2-workers", func(b *schedule.Builder) {
			br := b.Barrier("b", 3)
			for _, n := range []string{"d0", "d1", "d2"} {
				b.Task(n).Sync(br)
			}
		}, coop(2), []string{"occupancy"}},
		{"barrier-pool-3-workers", func(b *schedule.Builder) {
			br := b.Barrier("b", 3)
			for _, n := range []string{"d0", "d1", "d2"} {
				b.Task(n).Sync(br)
			}
		}, coop(3), nil},
		{"worker-exit", func(b *schedule.Builder) {
			c := b.Counter("c")
			b.Task("producer").On(1).Signal(c, 1)
			b.Task("dyn").Wait(c, 1)
		}, schedule.Launch{SMs: 1, PerSM: 1, Workers: 2}, []string{"occupancy"}},
		{"unsatisfiable", func(b *schedule.Builder) {
			c := b.Counter("c")
			b.Task("p").On(0).Signal(c, 1)
			b.Task("q").On(1).Wait(c, 2)
		}, coop(2), []string{"deadlock"}},
		{"unordered-write", func(b *schedule.Builder) {
			x := b.Buffer("x", schedule.KindState, 8)
			b.Task("a").On(0).Write(x, 0, 8)
			b.Task("b").On(1).Write(x, 4, 4)
		}, coop(2), []string{"race"}},
		{"lock", func(b *schedule.Builder) {
			s := b.Semaphore("lock", 1)
			x := b.Buffer("x", schedule.KindState, 8)
			b.Task("a").On(0).Acquire(s, 1).Write(x, 0, 8).Release(s, 1)
			b.Task("b").On(1).Acquire(s, 1).Write(x, 0, 8).Release(s, 1)
		}, coop(2), nil},
		{"two-token-lock", func(b *schedule.Builder) {
			s := b.Semaphore("lock", 2)
			x := b.Buffer("x", schedule.KindState, 8)
			b.Task("a").On(0).Acquire(s, 1).Write(x, 0, 8).Release(s, 1)
			b.Task("b").On(1).Acquire(s, 1).Write(x, 0, 8).Release(s, 1)
		}, coop(2), []string{"race"}},
		{"uninitialized", func(b *schedule.Builder) {
			x := b.Buffer("x", schedule.KindScratch, 8)
			b.Task("r").On(0).Read(x, 0, 8)
		}, coop(1), []string{"uninitialized-read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := schedule.NewBuilder(tc.name, tc.l)
			tc.build(b)
			p, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			got, err := brute.Families(p, brute.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("families %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	b := schedule.NewBuilder("wide", schedule.Launch{SMs: 8, PerSM: 1, Workers: 8, Cooperative: true})
	c := b.Counter("c")
	for w := range 8 {
		for i := range 4 {
			b.Task("t"+string(rune('a'+w))+string(rune('0'+i))).On(w).Signal(c, 1)
		}
	}
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := brute.Families(p, brute.Config{MaxStates: 100}); err != brute.ErrBudget {
		t.Errorf("err %v, want ErrBudget", err)
	}
}
