package verify

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"pgregory.net/rapid"
)

// transientProgram draws a program whose dynamic tasks take a pool
// semaphore in their guard or body and may release workers' waits: the
// shape in which claimed tasks can block for a while without staying
// blocked, with few workers so that they compete for them.
func transientProgram(t *rapid.T) *schedule.Program {
	workers := rapid.IntRange(1, 3).Draw(t, "workers")
	p := &schedule.Program{
		Name:       "transient",
		Launch:     schedule.Launch{SMs: rapid.IntRange(1, 4).Draw(t, "sms"), PerSM: 1, Workers: workers, Cooperative: rapid.Bool().Draw(t, "cooperative")},
		Counters:   []schedule.Counter{{Name: "c", Width: 64}, {Name: "d", Width: 64}},
		Semaphores: []schedule.Semaphore{{Name: "s", Tokens: uint64(rapid.IntRange(1, 2).Draw(t, "tokens"))}, {Name: "u", Tokens: 1}},
		Buffers:    []schedule.Buffer{{Name: "b", Kind: schedule.KindScratch, Size: 8, Arena: schedule.NoArena}},
	}
	nDyn := rapid.IntRange(1, 4).Draw(t, "dynamic")
	signals := 0
	for i := 0; i < nDyn; i++ {
		tk := schedule.Task{Name: fmt.Sprintf("d%d", i), Worker: schedule.Dynamic}
		sem := int32(rapid.IntRange(0, 1).Draw(t, "sem"))
		acq := schedule.Step{Kind: schedule.Acquire, Object: sem, Value: 1, Scope: schedule.ScopeGPU}
		rel := schedule.Step{Kind: schedule.Release, Object: sem, Value: 1, Scope: schedule.ScopeGPU}
		if rapid.Bool().Draw(t, "guarded") {
			tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Wait, Object: 1, Value: uint64(rapid.IntRange(1, 2).Draw(t, "dge")), Scope: schedule.ScopeGPU})
		}
		switch rapid.IntRange(0, 3).Draw(t, "shape") {
		case 0: // critical section around the body
			tk.Before = append(tk.Before, acq)
			tk.After = append(tk.After, rel)
		case 1: // critical section after the body
			tk.After = append(tk.After, acq, rel)
		case 2: // a wait after the guard: can stay blocked
			tk.Before = append(tk.Before, acq)
			tk.After = append(tk.After, rel, schedule.Step{Kind: schedule.Wait, Object: 1, Value: 1, Scope: schedule.ScopeGPU})
		case 3: // no semaphore
		}
		if rapid.Bool().Draw(t, "signals") {
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Signal, Object: 0, Value: 1, Scope: schedule.ScopeGPU})
			signals++
		}
		if rapid.Bool().Draw(t, "writes") {
			off := int64(rapid.IntRange(0, 3).Draw(t, "off"))
			tk.Writes = []schedule.Access{{Buffer: 0, Offset: off, Length: 2}}
		}
		p.Tasks = append(p.Tasks, tk)
	}
	for w := 0; w < workers; w++ {
		if !rapid.Bool().Draw(t, "static") {
			continue
		}
		tk := schedule.Task{Name: fmt.Sprintf("w%d", w), Worker: int32(w)}
		if signals > 0 && rapid.Bool().Draw(t, "waits") {
			tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Wait, Object: 0, Value: uint64(rapid.IntRange(1, signals).Draw(t, "ge")), Scope: schedule.ScopeGPU})
		}
		if rapid.Bool().Draw(t, "wsem") {
			tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Acquire, Object: 0, Value: 1, Scope: schedule.ScopeGPU})
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Release, Object: 0, Value: 1, Scope: schedule.ScopeGPU})
		}
		tk.After = append(tk.After, schedule.Step{Kind: schedule.Signal, Object: 1, Value: 1, Scope: schedule.ScopeGPU})
		p.Tasks = append(p.Tasks, tk)
	}
	return p
}

// TestDifferentialTransient holds verify to the explorer and the
// brute-force oracle on programs whose dynamic tasks hold workers while
// they wait for pool-semaphore tokens (transientDynamic).
func TestDifferentialTransient(t *testing.T) {
	tally := map[string]int{}
	rapid.Check(t, func(rt *rapid.T) {
		p := transientProgram(rt)
		if err := p.Validate(); err != nil {
			rt.Fatal(err)
		}
		if blocking, transient := transientDynamic(p); transient > 0 {
			tally["with transient tasks"]++
			if p2, _, _, ok := reduceSemaphores(p); ok {
				f := lowerForm(p2)
				if f.dispatchLimited(nonSimpleDynamic(p), 0) != "" && f.dispatchLimited(blocking, transient) == "" {
					tally["decided past the dispatch limit"]++
				}
			}
		}
		d, err := disagreement(p, tally)
		if err != nil {
			rt.Fatal(err)
		}
		if d != "" {
			js, _ := schedule.Marshal(p)
			rt.Fatalf("%s\n%s", d, strings.TrimSpace(string(js)))
		}
	})
	t.Logf("tally: %v", tally)
	if tally["decided past the dispatch limit"] == 0 || tally["brute compared"] == 0 {
		t.Errorf("no program exercised transient tasks against the brute-force oracle: %v", tally)
	}
}

// TestTransientPool: 2,000 dynamic tasks that take one of 7 tokens around
// their body, on 132 workers, are safe (the pool semaphore is dropped and
// the claimed tasks waiting for a token cannot stay blocked); with a wait
// after the body that nobody satisfies they are not.
func TestTransientPool(t *testing.T) {
	p := &schedule.Program{
		Name:       "pool",
		Launch:     schedule.Launch{SMs: 132, PerSM: 1, Workers: 132, Cooperative: true},
		Semaphores: []schedule.Semaphore{{Name: "s", Tokens: 7}},
		Buffers:    []schedule.Buffer{{Name: "b", Kind: schedule.KindScratch, Size: 2000, Arena: schedule.NoArena}},
	}
	for i := 0; i < 2000; i++ {
		p.Tasks = append(p.Tasks, schedule.Task{
			Name: fmt.Sprintf("t%d", i), Worker: schedule.Dynamic,
			Before: []schedule.Step{{Kind: schedule.Acquire, Object: 0, Value: 1, Scope: schedule.ScopeGPU}},
			Writes: []schedule.Access{{Buffer: 0, Offset: int64(i), Length: 1}},
			After:  []schedule.Step{{Kind: schedule.Release, Object: 0, Value: 1, Scope: schedule.ScopeGPU}},
		})
	}
	res, err := Run(context.Background(), p, Config{Sanity: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Safe {
		t.Fatalf("pool of 7 tokens, 2,000 dynamic tasks: %v %v, want safe", res.Verdict, res.Findings)
	}
	// Two tasks writing one byte: a race the explorer must decide (the
	// program is too big for it: not safe, and not a false unsafe).
	p.Tasks[1].Writes[0].Offset = 0
	if res, err = Run(context.Background(), p, Config{Sanity: true}); err != nil {
		t.Fatal(err)
	}
	if res.Verdict == Safe {
		t.Fatalf("overlapping writes under a 7-token pool: safe, want unsafe or inconclusive")
	}
}
