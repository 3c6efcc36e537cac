package mutate

import (
	"math"
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// stepRef locates one step: a task, its Before (after == false) or After
// list, and the index in that list.
type stepRef struct {
	task  int
	after bool
	idx   int
}

// list returns the step list the reference points into.
func (s stepRef) list(p *schedule.Program) *[]schedule.Step {
	t := &p.Tasks[s.task]
	if s.after {
		return &t.After
	}
	return &t.Before
}

// step returns the referenced step.
func (s stepRef) step(p *schedule.Program) *schedule.Step { return &(*s.list(p))[s.idx] }

// remove deletes the referenced step.
func (s stepRef) remove(p *schedule.Program) {
	l := s.list(p)
	*l = slices.Delete(*l, s.idx, s.idx+1)
}

// removeStep is the edit of operators that delete the selected step.
func removeStep(q *schedule.Program, ref stepRef, _ *rng) error {
	ref.remove(q)
	return nil
}

// stepPred selects step sites. It sees the whole program so it can look at
// the step's object; it must tolerate out-of-range objects.
type stepPred func(p *schedule.Program, ref stepRef, s schedule.Step) bool

// eachStep calls fn for every step of p in a fixed order: tasks in list
// order, each task's Before steps then its After steps. It stops when fn
// returns false.
func eachStep(p *schedule.Program, fn func(ref stepRef, s schedule.Step) bool) {
	for ti := range p.Tasks {
		t := &p.Tasks[ti]
		for j, s := range t.Before {
			if !fn(stepRef{ti, false, j}, s) {
				return
			}
		}
		for j, s := range t.After {
			if !fn(stepRef{ti, true, j}, s) {
				return
			}
		}
	}
}

// countSteps counts the steps that pred selects.
func countSteps(p *schedule.Program, pred stepPred) int { return countSites(p, eachStep, pred) }

// nthStep returns the n-th step (from 0) that pred selects.
func nthStep(p *schedule.Program, pred stepPred, n int) (stepRef, bool) {
	return nthSite(p, eachStep, pred, n)
}

// countSites counts the sites of one kind (steps or accesses) that pred
// selects.
func countSites[R, V any](p *schedule.Program, each func(*schedule.Program, func(R, V) bool), pred func(*schedule.Program, R, V) bool) int {
	n := 0
	each(p, func(ref R, v V) bool {
		if pred(p, ref, v) {
			n++
		}
		return true
	})
	return n
}

// nthSite returns the n-th site (from 0) of one kind that pred selects.
func nthSite[R, V any](p *schedule.Program, each func(*schedule.Program, func(R, V) bool), pred func(*schedule.Program, R, V) bool, n int) (R, bool) {
	var found R
	ok := false
	each(p, func(ref R, v V) bool {
		if pred(p, ref, v) {
			if n == 0 {
				found, ok = ref, true
				return false
			}
			n--
		}
		return true
	})
	return found, ok
}

// kindIs selects steps of one of the given kinds.
func kindIs(kinds ...schedule.StepKind) stepPred {
	return func(_ *schedule.Program, _ stepRef, s schedule.Step) bool { return slices.Contains(kinds, s.Kind) }
}

// stepOp builds the Sites and Apply of an operator whose sites are the steps
// pred selects.
func stepOp(name, class, source string, expect []string, pred stepPred, apply func(q *schedule.Program, ref stepRef, r *rng) error) *Operator {
	return newOp(name, class, source, expect,
		func(p *schedule.Program) int { return countSteps(p, pred) },
		func(q *schedule.Program, site int, r *rng) error {
			ref, ok := nthStep(q, pred, site)
			if !ok {
				return notApplicable("no step site %d", site)
			}
			return apply(q, ref, r)
		})
}

// accessRef locates one access: a task, its Reads (write == false) or
// Writes list, and the index in that list.
type accessRef struct {
	task  int
	write bool
	idx   int
}

func (a accessRef) list(p *schedule.Program) *[]schedule.Access {
	t := &p.Tasks[a.task]
	if a.write {
		return &t.Writes
	}
	return &t.Reads
}

func (a accessRef) access(p *schedule.Program) *schedule.Access { return &(*a.list(p))[a.idx] }

// accessPred selects access sites; it must tolerate out-of-range buffers.
type accessPred func(p *schedule.Program, ref accessRef, a schedule.Access) bool

// eachAccess calls fn for every access of p: tasks in list order, each
// task's Reads then its Writes. It stops when fn returns false.
func eachAccess(p *schedule.Program, fn func(ref accessRef, a schedule.Access) bool) {
	for ti := range p.Tasks {
		t := &p.Tasks[ti]
		for j, a := range t.Reads {
			if !fn(accessRef{ti, false, j}, a) {
				return
			}
		}
		for j, a := range t.Writes {
			if !fn(accessRef{ti, true, j}, a) {
				return
			}
		}
	}
}

// countAccesses counts the accesses that pred selects.
func countAccesses(p *schedule.Program, pred accessPred) int { return countSites(p, eachAccess, pred) }

// nthAccess returns the n-th access (from 0) that pred selects.
func nthAccess(p *schedule.Program, pred accessPred, n int) (accessRef, bool) {
	return nthSite(p, eachAccess, pred, n)
}

// accessOp builds an operator whose sites are the accesses pred selects.
func accessOp(name, class, source string, expect []string, pred accessPred, apply func(q *schedule.Program, ref accessRef, r *rng) error) *Operator {
	return newOp(name, class, source, expect,
		func(p *schedule.Program) int { return countAccesses(p, pred) },
		func(q *schedule.Program, site int, r *rng) error {
			ref, ok := nthAccess(q, pred, site)
			if !ok {
				return notApplicable("no access site %d", site)
			}
			return apply(q, ref, r)
		})
}

// bufferKind returns the kind of buffer b, or 0 when b is out of range.
func bufferKind(p *schedule.Program, b int32) schedule.BufferKind {
	if b < 0 || int(b) >= len(p.Buffers) {
		return 0
	}
	return p.Buffers[b].Kind
}

// counterOK reports whether c indexes a counter of p.
func counterOK(p *schedule.Program, c int32) bool { return c >= 0 && int(c) < len(p.Counters) }

// counterStats summarizes the use of each counter.
type counterStat struct {
	total   uint64 // init + every signal amount, saturating
	over    bool   // the exact sum exceeds 2^64 − 1 (total saturated)
	signals int
	waits   int
	minWait uint64 // smallest wait threshold (valid when waits > 0)
	maxWait uint64 // largest wait threshold
}

// counterStats returns one entry per counter, indexed by counter.
func counterStats(p *schedule.Program) []counterStat {
	st := make([]counterStat, len(p.Counters))
	for i, c := range p.Counters {
		st[i].total = c.Init
	}
	eachStep(p, func(_ stepRef, s schedule.Step) bool {
		if !counterOK(p, s.Object) {
			return true
		}
		c := &st[s.Object]
		switch s.Kind {
		case schedule.Signal:
			c.over = c.over || c.total > math.MaxUint64-s.Value
			c.total = satAdd(c.total, s.Value)
			c.signals++
		case schedule.Wait:
			if c.waits == 0 || s.Value < c.minWait {
				c.minWait = s.Value
			}
			c.maxWait = max(c.maxWait, s.Value)
			c.waits++
		}
		return true
	})
	return st
}

// queuePrev returns, for each task, the index of the previous task in the
// same worker's static queue, or -1 (first in its queue, or dynamic).
func queuePrev(p *schedule.Program) []int {
	prev := make([]int, len(p.Tasks))
	last := make([]int, max(p.Launch.Workers, 0))
	for i := range last {
		last[i] = -1
	}
	for i := range p.Tasks {
		prev[i] = -1
		w := int(p.Tasks[i].Worker)
		if w < 0 || w >= len(last) {
			continue
		}
		prev[i] = last[w]
		last[w] = i
	}
	return prev
}

// firstSignal returns the counter of the task's first After signal, or -1.
func firstSignal(t *schedule.Task) int32 {
	for _, s := range t.After {
		if s.Kind == schedule.Signal {
			return s.Object
		}
	}
	return -1
}
