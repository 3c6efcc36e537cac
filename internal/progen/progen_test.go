package progen_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify/explore"
	"pgregory.net/rapid"
)

func TestValid(t *testing.T) {
	phased := progen.Small()
	phased.Phases = true
	for _, o := range []progen.Options{progen.Small(), progen.Medium(), phased, {MaxThreads: 1, MaxSteps: 2, MaxTasks: 1}} {
		rapid.Check(t, func(t *rapid.T) {
			p := progen.Program(o).Draw(t, "p")
			if err := p.Validate(); err != nil {
				t.Fatalf("invalid program: %v", err)
			}
			f := schedule.Lower(p)
			if len(f.Threads) > o.MaxThreads && len(f.Threads) > p.Launch.Workers {
				t.Fatalf("%d threads, limit %d", len(f.Threads), o.MaxThreads)
			}
			for i, th := range f.Threads {
				if len(th.Ops) > o.MaxSteps {
					t.Fatalf("thread %d has %d steps, limit %d", i, len(th.Ops), o.MaxSteps)
				}
			}
			if len(p.Tasks) > o.MaxTasks {
				t.Fatalf("%d tasks, limit %d", len(p.Tasks), o.MaxTasks)
			}
		})
	}
}

// TestPhases checks that Options.Phases reuses barriers for a second
// generation in every form (a sync after or before the last body, an
// arrive only) and changes nothing else of the program drawn without it.
func TestPhases(t *testing.T) {
	o := progen.Small()
	plain := progen.Program(o)
	o.Phases = true
	phased := progen.Program(o)
	seen := map[string]int{}
	for seed := 0; seed < 2000; seed++ {
		p, q := plain.Example(seed), phased.Example(seed)
		if len(p.Tasks) != len(q.Tasks) || len(p.Barriers) != len(q.Barriers) {
			t.Fatalf("seed %d: phases changed the tasks or barriers", seed)
		}
		for i := range p.Tasks {
			a, b := p.Tasks[i], q.Tasks[i]
			if len(b.Before) < len(a.Before) || len(b.After) < len(a.After) {
				t.Fatalf("seed %d: task %d lost steps", seed, i)
			}
			for _, s := range b.After[len(a.After):] {
				seen["after "+s.Kind.String()]++
			}
			for _, s := range b.Before[len(a.Before):] {
				seen["before "+s.Kind.String()]++
			}
		}
	}
	for _, k := range []string{"after sync", "before sync", "after arrive"} {
		if seen[k] < 3 {
			t.Errorf("%s: %d programs, want at least 3 (%v)", k, seen[k], seen)
		}
	}
}

// TestCoverage checks that Small programs exercise every part of the model.
func TestCoverage(t *testing.T) {
	seen := map[string]int{}
	g := progen.Program(progen.Small())
	for seed := 0; seed < 500; seed++ {
		p := g.Example(seed)
		if !p.Launch.Cooperative {
			seen["non-cooperative"]++
		}
		if len(p.Arenas) > 0 {
			seen["arena"]++
		}
		for _, b := range p.Barriers {
			_ = b
			seen["barrier"]++
		}
		for _, tk := range p.Tasks {
			if !tk.Pinned() {
				seen["dynamic"]++
				if !p.Launch.Cooperative {
					seen["non-cooperative dynamic"]++
				}
				for _, s := range tk.Before {
					if s.Kind == schedule.Sync {
						seen["dynamic sync"]++
					}
				}
				for _, s := range tk.After {
					if s.Kind == schedule.Wait {
						seen["dynamic wait after"]++
					}
				}
			}
			for _, a := range append(tk.Reads, tk.Writes...) {
				if a.Rows > 1 {
					seen["tile"]++
				}
			}
			for _, s := range append(tk.Before, tk.After...) {
				seen[s.Kind.String()]++
				if s.Relaxed {
					seen["relaxed"]++
				}
				if s.Scope != schedule.ScopeGPU {
					seen["scope "+s.Scope.String()]++
				}
			}
		}
	}
	for _, k := range []string{"non-cooperative", "arena", "barrier", "dynamic", "tile", "wait", "signal", "sync", "acquire", "release", "fence", "relaxed", "scope cta", "scope sys",
		"non-cooperative dynamic", "dynamic sync", "dynamic wait after"} {
		if seen[k] == 0 {
			t.Errorf("500 Small programs have no %s", k)
		}
	}
}

// TestStats explores Small programs and reports the safe/unsafe mix and
// the explorer's speed; it fails when the mix is lopsided.
func TestStats(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	g := progen.Program(progen.Small())
	fam := map[string]int{}
	safe, unsafe, incomplete, states := 0, 0, 0, 0
	start := time.Now()
	for seed := 0; seed < n; seed++ {
		p := g.Example(seed)
		r, err := explore.Run(context.Background(), p, explore.Config{MaxStates: 200000})
		if err != nil {
			t.Fatal(err)
		}
		states += r.States
		switch {
		case !r.Complete:
			incomplete++
		case len(r.Findings) == 0:
			safe++
		default:
			unsafe++
		}
		seenFam := map[string]bool{}
		for _, f := range r.Findings {
			seenFam[f.Code] = true
		}
		for c := range seenFam {
			fam[c]++
		}
	}
	el := time.Since(start)
	var fs []string
	for c, k := range fam {
		fs = append(fs, c+"="+itoa(k))
	}
	sort.Strings(fs)
	t.Logf("%d Small programs: %d safe, %d unsafe, %d incomplete; %d states; %.0f programs/s", n, safe, unsafe, incomplete, states, float64(n)/el.Seconds())
	t.Logf("programs with each code: %s", strings.Join(fs, " "))
	if safe < n/5 || unsafe < n/5 {
		t.Errorf("lopsided mix: %d safe, %d unsafe of %d", safe, unsafe, n)
	}
	if incomplete > n/100 {
		t.Errorf("%d of %d programs hit the budget", incomplete, n)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
