package verify_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/megaproof/megaproof/corpus"
	"github.com/megaproof/megaproof/internal/brute"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
	"github.com/megaproof/megaproof/verify/explore"
	"pgregory.net/rapid"
)

// A one-edit twin of a semaphore seed: the edit, and the codes verify may
// report (the first is required).
type semaTwin struct {
	name  string
	edit  func(p *schedule.Program) error
	codes []string
}

// dropStep removes the first step of kind on semaphore sem from task.
func dropStep(task, sem string, kind schedule.StepKind) func(p *schedule.Program) error {
	return func(p *schedule.Program) error {
		t, s, err := taskAndSem(p, task, sem)
		if err != nil {
			return err
		}
		for _, list := range []*[]schedule.Step{&t.Before, &t.After} {
			for i, st := range *list {
				if st.Kind == kind && st.Object == s {
					*list = slices.Delete(slices.Clone(*list), i, i+1)
					return nil
				}
			}
		}
		return fmt.Errorf("task %s has no %v on %s", task, kind, sem)
	}
}

// swapAcquires reverses the order of task's first two acquires.
func swapAcquires(task string) func(p *schedule.Program) error {
	return func(p *schedule.Program) error {
		t, _, err := taskAndSem(p, task, "")
		if err != nil {
			return err
		}
		var at []int
		for i, st := range t.Before {
			if st.Kind == schedule.Acquire {
				at = append(at, i)
			}
		}
		if len(at) < 2 {
			return fmt.Errorf("task %s has fewer than 2 acquires", task)
		}
		t.Before = slices.Clone(t.Before)
		t.Before[at[0]], t.Before[at[1]] = t.Before[at[1]], t.Before[at[0]]
		return nil
	}
}

func taskAndSem(p *schedule.Program, task, sem string) (*schedule.Task, int32, error) {
	ti := slices.IndexFunc(p.Tasks, func(t schedule.Task) bool { return t.Name == task })
	if ti < 0 {
		return nil, 0, fmt.Errorf("no task %s", task)
	}
	si := slices.IndexFunc(p.Semaphores, func(s schedule.Semaphore) bool { return s.Name == sem })
	if si < 0 && sem != "" {
		return nil, 0, fmt.Errorf("no semaphore %s", sem)
	}
	return &p.Tasks[ti], int32(si), nil
}

var (
	skipAcquire = func(task, sem string) func(*schedule.Program) error {
		return dropStep(task, sem, schedule.Acquire)
	}
	dropRelease = func(task, sem string) func(*schedule.Program) error {
		return dropStep(task, sem, schedule.Release)
	}
	races    = []string{verify.CodeRaceRAW, verify.CodeRaceWAR, verify.CodeRaceWAW, verify.CodeUninitializedRead}
	semStuck = []string{verify.CodeDeadlockSemaphore, verify.CodeDeadlockCycle}
)

// The semaphore protocol seeds of the corpus (corpus/proto_sema.go), at the
// sizes the explorer labels and at full-GPU scale, are safe, and each
// one-edit twin (a skipped acquire, a missing release, acquires in
// opposite order) is unsafe with the right code and a witness that
// schedule.CheckWitness accepts. Where the explorer or the brute-force
// enumerator finishes, it agrees on the families.
func TestSemaphoreScaleSeeds(t *testing.T) {
	for _, tc := range []struct {
		recipe string
		twins  []semaTwin
	}{
		{"proto:kind=sema-ring,pairs=2,slots=2,items=4", []semaTwin{
			{"skip-full-acquire", skipAcquire("consume1.2", "full1"), races},
			{"missing-full-release", dropRelease("produce1.1", "full1"), semStuck},
		}},
		{"proto:kind=sema-ring,pairs=3,slots=1,items=3", []semaTwin{
			{"missing-empty-release", dropRelease("consume0.0", "empty0"), semStuck},
		}},
		{"proto:kind=sema-ring,pairs=66,slots=2,items=32", []semaTwin{
			{"skip-full-acquire", skipAcquire("consume33.16", "full33"), races},
			{"missing-full-release", dropRelease("produce33.16", "full33"), semStuck},
		}},
		{"proto:kind=sema-pool,workers=3,tasks=2,pages=4,take=2", []semaTwin{
			{"missing-release", dropRelease("fill1.0", "credits"), semStuck},
		}},
		{"proto:kind=sema-pool,workers=60,tasks=3,pages=30,take=1", nil},
		{"proto:kind=sema-pool,workers=132,tasks=4,pages=66,take=2", nil},
		{"proto:kind=sema-pool,workers=4,tasks=1,pages=2,take=1", []semaTwin{
			{"missing-release", dropRelease("fill3.0", "credits"), semStuck},
		}},
		{"proto:kind=sema-chain,workers=3,items=2,slots=1,rounds=2", []semaTwin{
			{"skip-full-acquire", skipAcquire("stage2.r1.i0", "full1"), races},
			{"missing-empty-release", dropRelease("stage1.r0.i0", "empty0"), semStuck},
		}},
		{"proto:kind=sema-chain,workers=132,items=2,slots=1,rounds=1", []semaTwin{
			{"skip-full-acquire", skipAcquire("stage70.r0.i1", "full69"), races},
			{"missing-full-release", dropRelease("stage70.r0.i1", "full70"), semStuck},
		}},
		{"proto:kind=sema-locks,workers=2,tasks=2", []semaTwin{
			{"opposite-order", swapAcquires("update1.1"), semStuck},
			{"missing-release", dropRelease("update0.0", "b"), semStuck},
		}},
		{"proto:kind=sema-dyn,workers=2,tasks=3,credits=1", []semaTwin{
			// The next task's claim waits for a guard acquire that never
			// holds: it is stuck at that acquire (docs/SEMANTICS.md codes
			// an unclaimed task by the first guard operation that fails).
			{"missing-release", dropRelease("work0", "credits"), []string{verify.CodeDeadlockSemaphore, verify.CodeDeadlockCycle}},
		}},
	} {
		t.Run(tc.recipe, func(t *testing.T) {
			seed, err := corpus.Build(tc.recipe)
			if err != nil {
				t.Fatal(err)
			}
			r := verifyAndCompare(t, seed)
			if r.Verdict != verify.Safe {
				t.Fatalf("seed: verdict %v, findings %+v", r.Verdict, r.Findings)
			}
			for _, tw := range tc.twins {
				t.Run(tw.name, func(t *testing.T) {
					p, err := corpus.Build(tc.recipe)
					if err != nil {
						t.Fatal(err)
					}
					if err := tw.edit(p); err != nil {
						t.Fatal(err)
					}
					r := verifyAndCompare(t, p)
					if r.Verdict != verify.Unsafe {
						t.Fatalf("twin: verdict %v, want unsafe (findings %+v)", r.Verdict, r.Findings)
					}
					seen := false
					for _, f := range r.Findings {
						if !slices.Contains(tw.codes, f.Code) {
							t.Errorf("code %s, want one of %v", f.Code, tw.codes)
						}
						seen = seen || f.Code == tw.codes[0]
						if f.Witness == nil {
							t.Errorf("%s: no witness", f.Code)
						} else if err := schedule.CheckWitness(p, f.Code, f.Tasks, f.Witness); err != nil {
							t.Errorf("%s: witness rejected: %v", f.Code, err)
						}
					}
					if !seen {
						t.Errorf("no %s finding among %v", tw.codes[0], codesOf(r))
					}
				})
			}
		})
	}
}

func codesOf(r *verify.Result) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Code)
	}
	return out
}

func familiesOf(codes []string) []string {
	var out []string
	for _, c := range codes {
		out = append(out, verify.Family(c))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// verifyAndCompare verifies p and holds the result to the explorer (at
// most 400 tasks, a few seconds) and the brute-force enumerator (at most
// 64 tasks) where they finish.
func verifyAndCompare(t *testing.T, p *schedule.Program) *verify.Result {
	t.Helper()
	explored := false
	defer func() {
		if len(p.Tasks) <= 16 && !explored {
			t.Errorf("the explorer did not finish on %d tasks", len(p.Tasks))
		}
	}()
	r, err := verify.Run(context.Background(), p, verify.Config{Sanity: true})
	if err != nil {
		t.Fatal(err)
	}
	got := familiesOf(codesOf(r))
	if len(p.Tasks) <= 400 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		er, err := explore.Run(ctx, p, explore.Config{MaxStates: 100000})
		cancel()
		if err == nil && er.Complete {
			explored = true
			var ec []string
			for _, f := range er.Findings {
				ec = append(ec, f.Code)
			}
			if want := familiesOf(ec); !slices.Equal(got, want) {
				t.Errorf("verify %v, explorer %v", got, want)
			}
		}
	}
	if len(p.Tasks) > 64 {
		return r
	}
	bf, err := brute.Families(p, brute.Config{MaxStates: 5000})
	switch {
	case errors.Is(err, brute.ErrBudget):
	case err != nil:
		t.Fatal(err)
	case !slices.Equal(got, bf):
		t.Errorf("verify %v, brute-force enumeration %v", got, bf)
	}
	return r
}

// A dynamic task whose guard acquires one semaphore twice is claimed once
// each acquire holds on its own, before the tokens for both are there: its
// second (cta-scoped) acquire is then reached unordered with the release
// that grants it, a race.scope. The counter form would claim it only once
// both thresholds hold, so such a semaphore is not decided as a counter.
func TestSemaphoreGuardAcquiredTwice(t *testing.T) {
	b := schedule.NewBuilder("guard-twice", schedule.Launch{Target: "toy", SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	s := b.Semaphore("s", 1)
	b.Task("r").On(0).Release(s, 1)
	b.Task("d").Acquire(s, 1)
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p.Tasks[1].Before = append(p.Tasks[1].Before, schedule.Step{Kind: schedule.Acquire, Object: int32(s), Value: 1, Scope: schedule.ScopeCTA})
	r := verifyAndCompare(t, p)
	if r.Verdict != verify.Unsafe || !slices.Contains(codesOf(r), verify.CodeRaceScope) {
		t.Fatalf("verdict %v, codes %v: want race.scope", r.Verdict, codesOf(r))
	}
}

// Random semaphore protocols (the corpus's rings, credit pools, stage
// chains, nested locks and guarded dynamic tasks at explorer sizes), each
// with a random edit — a dropped acquire or release, two acquires of a
// task swapped, a semaphore's tokens or an acquire's amount changed — are
// decided by verify as the explorer and the brute-force enumerator decide
// them, with every witness replayed (Config.Sanity).
func TestSemaphoreProtocolsDifferential(t *testing.T) {
	compared := map[string]int{}
	rapid.Check(t, func(rt *rapid.T) {
		var recipe string
		switch rapid.IntRange(0, 4).Draw(rt, "kind") {
		case 0:
			recipe = fmt.Sprintf("proto:kind=sema-ring,pairs=%d,slots=%d,items=%d",
				rapid.IntRange(1, 2).Draw(rt, "pairs"), rapid.IntRange(1, 3).Draw(rt, "slots"), rapid.IntRange(1, 4).Draw(rt, "items"))
		case 1:
			pages := rapid.IntRange(1, 4).Draw(rt, "pages")
			recipe = fmt.Sprintf("proto:kind=sema-pool,workers=%d,tasks=%d,pages=%d,take=%d",
				rapid.IntRange(1, 3).Draw(rt, "workers"), rapid.IntRange(1, 2).Draw(rt, "tasks"), pages, rapid.IntRange(1, pages).Draw(rt, "take"))
		case 2:
			recipe = fmt.Sprintf("proto:kind=sema-chain,workers=%d,items=%d,slots=%d,rounds=%d",
				rapid.IntRange(2, 3).Draw(rt, "workers"), rapid.IntRange(1, 3).Draw(rt, "items"), rapid.IntRange(1, 2).Draw(rt, "slots"), rapid.IntRange(1, 2).Draw(rt, "rounds"))
		case 3:
			recipe = fmt.Sprintf("proto:kind=sema-locks,workers=%d,tasks=%d", rapid.IntRange(1, 3).Draw(rt, "workers"), rapid.IntRange(1, 2).Draw(rt, "tasks"))
		default:
			recipe = fmt.Sprintf("proto:kind=sema-dyn,workers=%d,tasks=%d,credits=%d",
				rapid.IntRange(2, 3).Draw(rt, "workers"), rapid.IntRange(1, 3).Draw(rt, "tasks"), rapid.IntRange(1, 2).Draw(rt, "credits"))
		}
		p, err := corpus.Build(recipe)
		if err != nil {
			rt.Fatal(err)
		}
		ti := rapid.IntRange(0, len(p.Tasks)-1).Draw(rt, "task")
		tk := &p.Tasks[ti]
		var sites []*[]schedule.Step
		for _, l := range []*[]schedule.Step{&tk.Before, &tk.After} {
			if slices.ContainsFunc(*l, func(s schedule.Step) bool { return s.Kind == schedule.Acquire || s.Kind == schedule.Release }) {
				sites = append(sites, l)
			}
		}
		edit := rapid.IntRange(0, 4).Draw(rt, "edit")
		switch {
		case edit == 1 && len(sites) > 0: // drop a semaphore step
			l := sites[rapid.IntRange(0, len(sites)-1).Draw(rt, "list")]
			var at []int
			for i, s := range *l {
				if s.Kind == schedule.Acquire || s.Kind == schedule.Release {
					at = append(at, i)
				}
			}
			i := at[rapid.IntRange(0, len(at)-1).Draw(rt, "step")]
			*l = slices.Delete(slices.Clone(*l), i, i+1)
		case edit == 2: // swap the first two acquires
			_ = swapAcquires(tk.Name)(p)
		case edit == 3 && len(p.Semaphores) > 0: // tokens changed
			s := &p.Semaphores[rapid.IntRange(0, len(p.Semaphores)-1).Draw(rt, "sem")]
			if rapid.Bool().Draw(rt, "more") || s.Tokens == 0 {
				s.Tokens++
			} else {
				s.Tokens--
			}
		case edit == 4 && len(sites) > 0: // an amount changed
			l := sites[0]
			for i, s := range *l {
				if s.Kind == schedule.Acquire || s.Kind == schedule.Release {
					*l = slices.Clone(*l)
					(*l)[i].Value = uint64(rapid.IntRange(1, 3).Draw(rt, "n"))
					break
				}
			}
		}
		if p.Validate() != nil {
			return
		}
		r, err := verify.Run(context.Background(), p, verify.Config{Sanity: true, MaxStates: 200000})
		if err != nil {
			rt.Fatal(err)
		}
		if r.Verdict == verify.Inconclusive {
			compared["inconclusive"]++
			return
		}
		got := familiesOf(codesOf(r))
		er, err := explore.Run(context.Background(), p, explore.Config{MaxStates: 200000})
		if err == nil && er.Complete {
			var ec []string
			for _, f := range er.Findings {
				ec = append(ec, f.Code)
			}
			if want := familiesOf(ec); !slices.Equal(got, want) {
				rt.Fatalf("%s, edit %d of task %s: verify %v, explorer %v", recipe, edit, tk.Name, got, want)
			}
			compared["explorer"]++
		}
		bf, err := brute.Families(p, brute.Config{MaxStates: 5000})
		switch {
		case errors.Is(err, brute.ErrBudget):
		case err != nil:
			rt.Fatal(err)
		case !slices.Equal(got, bf):
			rt.Fatalf("%s, edit %d of task %s: verify %v, brute-force enumeration %v", recipe, edit, tk.Name, got, bf)
		default:
			compared["brute"]++
		}
		compared[r.Stats.Engine]++
		compared[r.Verdict.String()]++
	})
	t.Logf("compared: %v", compared)
	if compared["explorer"] == 0 || compared["brute"] == 0 {
		t.Errorf("no program was compared with both oracles: %v", compared)
	}
}
