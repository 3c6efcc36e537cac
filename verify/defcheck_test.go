package verify

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/megaproof/megaproof/internal/defcheck"
	"github.com/megaproof/megaproof/schedule"
	"pgregory.net/rapid"
)

// quickProgram draws a small program without semaphores.
func quickProgram(t *rapid.T) *schedule.Program {
	workers := rapid.IntRange(1, 3).Draw(t, "workers")
	coop := rapid.Bool().Draw(t, "coop")
	cap := workers
	if !coop {
		cap = rapid.IntRange(1, workers).Draw(t, "cap")
	}
	b := schedule.NewBuilder("q", schedule.Launch{SMs: cap, PerSM: 1, Workers: workers, Cooperative: coop})
	nc := rapid.IntRange(1, 3).Draw(t, "counters")
	var cs []schedule.CounterRef
	for i := 0; i < nc; i++ {
		cs = append(cs, b.CounterInit(fmt.Sprintf("c%d", i), uint64(rapid.IntRange(0, 1).Draw(t, "init")), 32))
	}
	ar := b.Arena("a", 16)
	bufs := []schedule.BufferRef{
		b.Buffer("s", schedule.KindScratch, 8),
		b.BufferIn("p", schedule.KindScratch, 8, ar, 0),
		b.BufferIn("q", schedule.KindScratch, 8, ar, 4),
		b.Buffer("st", schedule.KindState, 8),
	}
	var br schedule.BarrierRef = -1
	if rapid.Bool().Draw(t, "barrier") {
		br = b.Barrier("b", rapid.IntRange(1, 3).Draw(t, "parties"))
	}
	nt := rapid.IntRange(1, 6).Draw(t, "tasks")
	for i := 0; i < nt; i++ {
		tk := b.Task(fmt.Sprintf("t%d", i))
		if w := rapid.IntRange(-1, workers-1).Draw(t, "worker"); w >= 0 {
			tk.On(w)
		}
		opt := func(kind string) []schedule.StepOption {
			var o []schedule.StepOption
			if rapid.IntRange(0, 5).Draw(t, kind+"relaxed") == 0 {
				o = append(o, schedule.Relaxed())
			}
			if rapid.IntRange(0, 7).Draw(t, kind+"cta") == 0 {
				o = append(o, schedule.WithScope(schedule.ScopeCTA))
			}
			return o
		}
		for j := rapid.IntRange(0, 2).Draw(t, "waits"); j > 0; j-- {
			tk.Wait(cs[rapid.IntRange(0, nc-1).Draw(t, "wc")], uint64(rapid.IntRange(1, nt/2+1).Draw(t, "thr")), opt("w")...)
		}
		if rapid.IntRange(0, 4).Draw(t, "fb") == 0 {
			tk.FenceBefore(schedule.ScopeGPU)
		}
		if br >= 0 && rapid.IntRange(0, 2).Draw(t, "sync") == 0 {
			tk.Sync(br)
		}
		for j := rapid.IntRange(0, 2).Draw(t, "accesses"); j > 0; j-- {
			buf := bufs[rapid.IntRange(0, len(bufs)-1).Draw(t, "buf")]
			off := uint64(rapid.IntRange(0, 6).Draw(t, "off"))
			ln := uint64(rapid.IntRange(1, int(8-off)).Draw(t, "len"))
			if rapid.Bool().Draw(t, "write") {
				tk.Write(buf, off, ln)
			} else {
				tk.Read(buf, off, ln)
			}
		}
		if rapid.IntRange(0, 4).Draw(t, "fa") == 0 {
			tk.FenceAfter(schedule.ScopeGPU)
		}
		for j := rapid.IntRange(0, 3).Draw(t, "signals"); j > 0; j-- {
			tk.Signal(cs[rapid.IntRange(0, nc-1).Draw(t, "sc")], 1, opt("s")...)
		}
	}
	p, err := b.Build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return p
}

func families(r *Result) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, Family(f.Code))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestAgreesWithDefinitionalChecker(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := quickProgram(t)
		want, err := defcheck.Families(p)
		if err != nil {
			t.Skip(err)
		}
		res, err := Run(context.Background(), p, Config{Sanity: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := families(res); !slices.Equal(got, want) {
			js, _ := schedule.Marshal(p)
			t.Fatalf("verify %v, defcheck %v\n%s\nfindings %+v", got, want, js, res.Findings)
		}
	})
}

func TestQuickProgramMix(t *testing.T) {
	fams := map[string]int{}
	safe, n := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		p := quickProgram(t)
		res, err := Run(context.Background(), p, Config{})
		if err != nil {
			t.Fatal(err)
		}
		n++
		if res.Verdict == Safe {
			safe++
		}
		for _, f := range families(res) {
			fams[f]++
		}
	})
	t.Logf("%d programs, %d safe, families %v", n, safe, fams)
}
