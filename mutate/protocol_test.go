package mutate_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/megaproof/megaproof/mutate"
	"github.com/megaproof/megaproof/schedule"
)

func init() {
	checks["move-acquire"] = checkMoveAcquire
	checks["narrow-sys-scope"] = oneStepChange(func(p, q *schedule.Program, a, b schedule.Step, _ int) bool {
		return a.Scope == schedule.ScopeSys && b.Scope == schedule.ScopeGPU && sameExcept(a, b, "scope")
	})
	checks["narrow-shared-scope"] = oneStepChange(func(p, q *schedule.Program, a, b schedule.Step, task int) bool {
		switch a.Kind {
		case schedule.Wait, schedule.Signal, schedule.Acquire, schedule.Release:
		default:
			return false
		}
		return a.Scope != schedule.ScopeCTA && b.Scope == schedule.ScopeCTA && sameExcept(a, b, "scope") &&
			sharedWith(q, task, b)
	})
	checks["claim-before-ready"] = checkClaimBeforeReady
	checks["hold-workers"] = checkHoldWorkers
	checks["merge-barriers"] = checkMergeBarriers
	checks["skip-acquire"] = countDelta(schedule.Acquire, -1)
}

// threadOf returns the normal-form thread of each task (schedule.Lower's
// numbering).
func threadOf(p *schedule.Program) []int {
	f := schedule.Lower(p)
	th := make([]int, len(p.Tasks))
	for i, t := range f.Threads {
		for _, op := range t.Ops {
			th[op.Task] = i
		}
	}
	return th
}

// sharedWith reports whether a task on another thread than task's operates
// on s's counter or semaphore, one of the two operations modifying it.
func sharedWith(q *schedule.Program, task int, s schedule.Step) bool {
	th := threadOf(q)
	sem := s.Kind == schedule.Acquire || s.Kind == schedule.Release
	for i, t := range q.Tasks {
		if th[i] == th[task] {
			continue
		}
		for _, o := range slices.Concat(t.Before, t.After) {
			oSem := o.Kind == schedule.Acquire || o.Kind == schedule.Release
			if (o.Kind == schedule.Wait || o.Kind == schedule.Signal || oSem) && oSem == sem && o.Object == s.Object &&
				(s.Kind != schedule.Wait || o.Kind != schedule.Wait) {
				return true
			}
		}
	}
	return false
}

// checkMoveAcquire: only the Relaxed flags of waits of one step list
// change; exactly one wait went from acquire to relaxed, at most one the
// other way, and the list keeps an acquire wait on another counter.
func checkMoveAcquire(p, q *schedule.Program) string {
	sp, tp := allSteps(p)
	sq, tq := allSteps(q)
	if len(sp) != len(sq) || !slices.Equal(tp, tq) {
		return "step layout changed"
	}
	relaxed, strengthened, task := -1, -1, -1
	for i := range sp {
		a, b := sp[i], sq[i]
		if a == b {
			continue
		}
		if a.Kind != schedule.Wait || !sameExcept(a, b, "relaxed") || (task >= 0 && tp[i] != task) {
			return "a change other than the relaxed flag of one task's waits"
		}
		task = tp[i]
		if b.Relaxed {
			if relaxed >= 0 {
				return "two waits relaxed"
			}
			relaxed = i
		} else {
			if strengthened >= 0 {
				return "two waits strengthened"
			}
			strengthened = i
		}
	}
	if relaxed < 0 {
		return "no wait relaxed"
	}
	for i := range sq {
		if tq[i] == task && i != relaxed && sq[i].Kind == schedule.Wait && !sq[i].Relaxed && sq[i].Object != sq[relaxed].Object {
			return ""
		}
	}
	return "the task keeps no acquire wait on another counter"
}

// checkClaimBeforeReady: one simple dynamic task whose first step was a
// wait gained a cta fence in front; nothing else changed.
func checkClaimBeforeReady(p, q *schedule.Program) string {
	n := 0
	for i := range p.Tasks {
		a, b := &p.Tasks[i], &q.Tasks[i]
		if slices.Equal(a.Before, b.Before) {
			continue
		}
		n++
		if a.Pinned() || len(a.Before) == 0 || a.Before[0].Kind != schedule.Wait {
			return "the task is pinned or does not start with a wait"
		}
		if len(b.Before) != len(a.Before)+1 || b.Before[0] != (schedule.Step{Kind: schedule.Fence, Scope: schedule.ScopeCTA}) || !slices.Equal(b.Before[1:], a.Before) {
			return "want a cta fence put in front of the before-steps"
		}
		for _, s := range slices.Concat(a.Before, a.After) {
			if s.Kind == schedule.Acquire || s.Kind == schedule.Sync {
				return "the task was not simple"
			}
		}
	}
	if n != 1 {
		return strconv.Itoa(n) + " tasks changed, want 1"
	}
	if !slices.EqualFunc(p.Tasks, q.Tasks, func(a, b schedule.Task) bool { return slices.Equal(a.After, b.After) }) {
		return "after-steps changed"
	}
	return ""
}

// checkHoldWorkers: one new barrier of R+1 parties, and R+1 consecutive
// dynamic tasks end with a sync on it.
func checkHoldWorkers(p, q *schedule.Program) string {
	r := min(p.Launch.Workers, p.Launch.Capacity())
	if len(q.Barriers) != len(p.Barriers)+1 || !slices.Equal(q.Barriers[:len(p.Barriers)], p.Barriers) {
		return "want one barrier added"
	}
	b := int32(len(p.Barriers))
	if q.Barriers[b].Parties != r+1 {
		return "new barrier has " + strconv.Itoa(q.Barriers[b].Parties) + " parties, want " + strconv.Itoa(r+1)
	}
	var group, dyn []int
	for i := range p.Tasks {
		a, c := &p.Tasks[i], &q.Tasks[i]
		if !a.Pinned() {
			dyn = append(dyn, i)
		}
		if !slices.Equal(a.Before, c.Before) {
			return "before-steps changed"
		}
		if slices.Equal(a.After, c.After) {
			continue
		}
		if a.Pinned() || len(c.After) != len(a.After)+1 || !slices.Equal(c.After[:len(a.After)], a.After) ||
			c.After[len(a.After)] != (schedule.Step{Kind: schedule.Sync, Object: b}) {
			return "want a sync on the new barrier appended to dynamic tasks"
		}
		group = append(group, i)
	}
	if len(group) != r+1 {
		return strconv.Itoa(len(group)) + " tasks sync, want " + strconv.Itoa(r+1)
	}
	k := slices.Index(dyn, group[0])
	if !slices.Equal(dyn[k:k+r+1], group) {
		return "the group is not consecutive among the dynamic tasks"
	}
	return ""
}

// checkMergeBarriers: the barriers keep their parties, and the steps of
// one barrier moved onto another one; nothing else changed.
func checkMergeBarriers(p, q *schedule.Program) string {
	if !slices.Equal(p.Barriers, q.Barriers) {
		return "barrier list changed"
	}
	sp, tp := allSteps(p)
	sq, tq := allSteps(q)
	if len(sp) != len(sq) || !slices.Equal(tp, tq) {
		return "step layout changed"
	}
	from, into := int32(-1), int32(-1)
	for i := range sp {
		a, b := sp[i], sq[i]
		isBarrier := a.Kind == schedule.Sync || a.Kind == schedule.Arrive
		if a == b {
			if isBarrier && a.Object == from {
				return "a step stayed on the merged barrier"
			}
			continue
		}
		if !isBarrier || !sameExcept(a, b, "object") || (from >= 0 && (a.Object != from || b.Object != into)) {
			return "unexpected step change"
		}
		from, into = a.Object, b.Object
	}
	if from < 0 {
		return "no step moved"
	}
	for _, s := range sq {
		if (s.Kind == schedule.Sync || s.Kind == schedule.Arrive) && s.Object == from {
			return "the merged barrier still has steps"
		}
	}
	return ""
}

// grid is a program for the operators that need several barriers, sys
// scopes and many dynamic tasks: two workers sync on one barrier, one of
// them also on a barrier of its own, and four dynamic tasks chain through
// counters.
func grid(t testing.TB) *schedule.Program {
	t.Helper()
	b := schedule.NewBuilder("grid", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindScratch, 256)
	y := b.Buffer("y", schedule.KindOutput, 256)
	ga := b.Barrier("ga", 2)
	gb := b.Barrier("gb", 1)
	c := b.Counter("c")
	d := b.Counter("d")
	e := b.Counter("e")
	b.Task("w0").On(0).Write(x, 0, 128).Sync(ga).Signal(c, 1, schedule.WithScope(schedule.ScopeSys))
	b.Task("w1").On(1).Write(x, 128, 128).Sync(ga).Sync(gb).Signal(c, 1)
	b.Task("v0").On(0).Signal(e, 1)
	b.Task("t0").Wait(c, 2, schedule.WithScope(schedule.ScopeSys)).Wait(e, 1, schedule.Relaxed()).Read(x, 0, 256).Write(y, 0, 64).Signal(d, 1)
	b.Task("t1").Wait(d, 1).Write(y, 64, 64).Signal(d, 1)
	b.Task("t2").Wait(d, 2).Write(y, 128, 64).Signal(d, 1)
	b.Task("t3").Wait(d, 3).Write(y, 192, 64)
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProtocolOperators pins the sites and exact rewrites of the operators
// of protocol.go on grid.
func TestProtocolOperators(t *testing.T) {
	p := grid(t)
	want := map[string]int{
		// t0's wait on c has a partner on e; t0's relaxed wait on e is not a site.
		"move-acquire": 1,
		// w0's signal and t0's wait on c.
		"narrow-sys-scope": 2,
		// c: 2 signals + 1 wait; e: 1 signal + 1 wait; d: 3 signals + 3
		// waits, each on another thread than the others.
		"narrow-shared-scope": 11,
		// t0, t1, t2 and t3 all start with a wait.
		"claim-before-ready": 4,
		// 4 dynamic tasks, 2 resident workers: groups of 3 at 0 and 1.
		"hold-workers": 2,
		// (ga, gb) and (gb, ga): 2 parties against 1.
		"merge-barriers": 2,
		"skip-acquire":   0,
	}
	for name, n := range want {
		op, _ := mutate.Lookup(name)
		if got := op.Sites(p); got != n {
			t.Errorf("%s: %d sites, want %d", name, got, n)
		}
		for site := range op.Sites(p) {
			for _, seed := range seeds {
				if _, err := applyChecked(t, op, p, site, seed); err != nil {
					t.Errorf("%s site %d: %v", name, site, err)
				}
			}
		}
	}

	apply := func(name string, site int) *schedule.Program {
		op, _ := mutate.Lookup(name)
		q, err := op.Apply(p, site, 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return q
	}
	byName := func(q *schedule.Program, n string) *schedule.Task {
		for i := range q.Tasks {
			if q.Tasks[i].Name == n {
				return &q.Tasks[i]
			}
		}
		t.Fatalf("no task %q", n)
		return nil
	}

	// The acquire moves from t0's wait on c onto its relaxed wait on e.
	q := apply("move-acquire", 0)
	if w := byName(q, "t0").Before; !w[0].Relaxed || w[1].Relaxed {
		t.Errorf("move-acquire: t0 waits %+v, want c relaxed and e acquire", w)
	}
	// Merging gb into ga leaves gb without steps.
	q = apply("merge-barriers", 0)
	for _, tk := range q.Tasks {
		for _, s := range slices.Concat(tk.Before, tk.After) {
			if s.Kind == schedule.Sync && s.Object != 0 {
				t.Errorf("merge-barriers: %s still syncs on barrier %d", tk.Name, s.Object)
			}
		}
	}
	// hold-workers at site 1 groups t1, t2, t3 on a 3-party barrier.
	q = apply("hold-workers", 1)
	if got := q.Barriers[len(q.Barriers)-1]; got.Parties != 3 || got.Name != "mutate.hold" {
		t.Errorf("hold-workers: new barrier %+v", got)
	}
	if n := len(byName(q, "t0").After); n != 1 {
		t.Errorf("hold-workers: t0 has %d after-steps, want 1 (not in the group)", n)
	}
	// claim-before-ready makes the task non-simple in the lowered form: a
	// fence, not a wait, is its first operation.
	q = apply("claim-before-ready", 1)
	if f := schedule.Lower(q); f.Threads[f.Workers+1].Ops[0].Kind != schedule.OpFence {
		t.Errorf("claim-before-ready: t1 starts with %v", f.Threads[f.Workers+1].Ops[0].Kind)
	}
}

// TestSkipAcquireKeepsReleases: the credit acquire goes, every release of
// the task stays.
func TestSkipAcquireKeepsReleases(t *testing.T) {
	p := pipeline(t)
	op, _ := mutate.Lookup("skip-acquire")
	if n := op.Sites(p); n != 3 {
		t.Fatalf("skip-acquire: %d sites on pipeline, want 3", n)
	}
	q, err := op.Apply(p, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := steps(q, schedule.Release), steps(p, schedule.Release); got != want {
		t.Errorf("releases %d, want %d", got, want)
	}
	if got := q.Tasks[2].Before; slices.ContainsFunc(got, func(s schedule.Step) bool { return s.Kind == schedule.Acquire && s.Object == 0 }) {
		t.Errorf("c0 still acquires s1: %+v", got)
	}
}
