package verify

import (
	"context"
	"fmt"

	"github.com/megaproof/megaproof/schedule"
)

// This file decides race.scope for programs of counters and barriers, and
// which programs the confluent analyses cannot decide under dispatch.
//
// race.scope (docs/SEMANTICS.md): two threads' operations x and y on one
// counter, at least one a signal and at least one cta-scoped, both reached
// in some execution with neither happening before the other's reaching.
// A withhold-run with x's thread frozen before x and y's thread frozen
// before y reaches the unique maximal state of the frozen system
// (confluence); when both threads stand at their operations there, that
// run is the witness: neither has executed, so neither happens before the
// other's reaching. A dynamic thread reaches its first operation only by
// executing it (its claim), so it is frozen just after it instead.
//
// When one of them is not reached in that run, every execution executes
// the other before reaching it, and the question becomes whether that
// operation happens before the reaching in every execution. Those pairs
// are left to the explorer (exact within its budget); so are pairs beyond
// maxScopeRuns withhold-runs, and runs in which a claimed first operation
// happens before the other's reaching (schedule.CheckWitness judges the
// run's trace).
//
// Dispatch: the greedy engine, the proof clocks and the sweeps decide the
// unbounded launch with claims gated by their whole guard (the pre-checks
// of lowerForm). That is the launch's dispatch exactly when a worker is
// free for every claim in every state: when no more dynamic tasks can
// block after their guard than there are resident workers with empty
// queues (those workers are free from the start, only non-simple tasks
// hold one, and an unclaimed one leaves at most the others holding), and,
// when simple tasks exist, more resident workers than such tasks. Tasks
// that hold a worker but cannot stay blocked (transientDynamic) need one
// more empty worker and make only a safe verdict final. Worker exit (a worker leaves its slot only once every dynamic
// task has ended) is part of the engine's and the taint game's residency.
// Other programs with dynamic tasks go to the explorer.

// maxScopeRuns bounds the race.scope candidates, and scopeWork the
// operations their withhold-runs may execute in all (a run executes at
// most every operation once).
const (
	maxScopeRuns = 1 << 16
	scopeWork    = 1 << 25
)

// dispatchLimited says why the launch's dispatch or worker exit may
// restrict the program's executions beyond what the confluent analyses
// model, or returns "". blocking is the number of non-simple dynamic tasks
// that can block after their guard (counted on the program as given: a
// semaphore's acquire blocks even where the counter form turns it into a
// wait), and transient the other non-simple ones (see transientDynamic).
func (f *form) dispatchLimited(blocking, transient int) string {
	p := f.p
	dynamic := f.threads() - f.workers
	if dynamic == 0 {
		return ""
	}
	// The workers resident from the start: with dynamic tasks none exits
	// before they have all ended, so those of them with empty queues stay
	// free for claims throughout.
	l := p.Launch
	resident := f.workers
	if !l.Cooperative {
		resident = min(resident, l.Capacity())
	}
	empty := 0
	for w := 0; w < resident; w++ {
		if f.start[w] == f.start[w+1] {
			empty++
		}
	}
	// A claim of a task that can block finds a free worker when the others
	// hold at most blocking-1 of the empty ones, a claim of a transient
	// task when they hold at most blocking, and a simple claim when some
	// resident worker holds no task.
	need := blocking
	if transient > 0 {
		need++
	}
	if empty < need || dynamic > blocking+transient && resident <= blocking {
		return fmt.Sprintf("%d dynamic tasks can block after their guard while holding a worker, and %d resident workers have empty queues", blocking+transient, empty)
	}
	return ""
}

// scopeCandidate is a pair of operations that race.scope may relate.
type scopeCandidate struct{ x, y int32 }

// scopeCandidates lists, per counter with a cta-scoped operation, the
// pairs of operations of different threads with at least one signal and at
// least one cta-scoped (at most maxScopeRuns+1 of them).
func (f *form) scopeCandidates() []scopeCandidate {
	// Most programs have no cta-scoped counter step: one scan, no lists.
	narrow := false
	for x := range f.kind {
		if (f.kind[x] == kWait || f.kind[x] == kAdd) && f.flags[x]&(fCross|fBarrier|fCheck) == 0 {
			narrow = true
			break
		}
	}
	if !narrow {
		return nil
	}
	byObj := map[int32][]int32{}
	hasCTA := map[int32]bool{}
	for x := range f.kind {
		x := int32(x)
		if (f.kind[x] != kWait && f.kind[x] != kAdd) || f.is(x, fBarrier) || f.is(x, fCheck) {
			continue
		}
		o := f.obj[x]
		byObj[o] = append(byObj[o], x)
		if !f.is(x, fCross) {
			hasCTA[o] = true
		}
	}
	var out []scopeCandidate
	for o := int32(0); o < int32(f.nc); o++ {
		if !hasCTA[o] {
			continue
		}
		ops := byObj[o]
		for i, x := range ops {
			for _, y := range ops[i+1:] {
				if f.opThread[x] == f.opThread[y] {
					continue
				}
				if f.kind[x] != kAdd && f.kind[y] != kAdd || f.is(x, fCross) && f.is(y, fCross) {
					continue
				}
				out = append(out, scopeCandidate{x, y})
				if len(out) > maxScopeRuns {
					return out
				}
			}
		}
	}
	return out
}

// firstOp is the first schedule operation of thread t (past its pre-checks).
func (f *form) firstOp(t int32) int32 {
	x := f.start[t]
	for x < f.start[t+1] && f.is(x, fCheck) {
		x++
	}
	return x
}

// scopeRaces decides the race.scope candidates of a counter program with
// withhold-runs. It reports the races it proves and whether some pair is
// left undecided.
func (v *verifier) scopeRaces(ctx context.Context) (undecided bool, err error) {
	f := v.f
	cands := f.scopeCandidates()
	if len(cands) == 0 {
		return false, nil
	}
	if len(cands) > maxScopeRuns {
		return true, nil
	}
	e := newEngine(f, false)
	defer e.release()
	e.record = true
	done := map[[2]int32]bool{}
	work, found := 0, 0
	report := func(x, y int32, witness []schedule.Event) bool {
		if found++; found > maxFindingsPerCode {
			v.truncated = append(v.truncated, fmt.Sprintf("%s: more than %d task pairs, %d reported", CodeRaceScope, maxFindingsPerCode, maxFindingsPerCode))
			return false
		}
		v.add(v.scopeFinding(x, y, witness))
		return true
	}
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		// Each candidate costs at most four runs over the form.
		if work += 4 * len(f.kind); work > scopeWork {
			return true, nil
		}
		lo, hi := f.task[c.x], f.task[c.y]
		if lo > hi {
			lo, hi = hi, lo
			c.x, c.y = c.y, c.x
		}
		if done[[2]int32{lo, hi}] {
			continue
		}
		e.reset()
		tx, ty := f.opThread[c.x], f.opThread[c.y]
		// A dynamic thread reaches its first operation by executing it.
		stopX, stopY := c.x, c.y
		if int(tx) >= f.workers && c.x == f.firstOp(tx) {
			stopX++
		}
		if int(ty) >= f.workers && c.y == f.firstOp(ty) {
			stopY++
		}
		e.freeze(int(tx), stopX)
		e.freeze(int(ty), stopY)
		e.run()
		reached := func(t, x, stop int32) bool {
			if stop > x {
				return e.executed(x)
			}
			return e.pos[t] == x && (int(t) >= f.workers || e.resident || int(t) < e.started)
		}
		if reached(tx, c.x, stopX) && reached(ty, c.y, stopY) {
			witness := f.events(e.trace)
			// Two frozen operations have not executed, so neither happens
			// before anything. A claimed first operation has, and the
			// trace's happens-before decides whether it reaches the other.
			if stopX > c.x || stopY > c.y {
				if schedule.CheckWitness(f.p, CodeRaceScope, []int{int(lo), int(hi)}, witness) != nil {
					undecided = true
					continue
				}
			}
			done[[2]int32{lo, hi}] = true
			if !report(c.x, c.y, witness) {
				return false, nil
			}
			continue
		}
		rx, ry := reached(tx, c.x, stopX), reached(ty, c.y, stopY)
		if rx == ry {
			continue // neither is ever reached while the other waits: no race
		}
		// One of them, a, always executes before the other, b, is reached.
		a, b, tb, stopB := c.y, c.x, tx, stopX
		if rx {
			a, b, tb, stopB = c.x, c.y, ty, stopY
		}
		witness, race, ok := v.scopeOrdered(e, a, b, tb, stopB)
		switch {
		case !ok:
			undecided = true
		case race && schedule.CheckWitness(f.p, CodeRaceScope, []int{int(lo), int(hi)}, witness) == nil:
			done[[2]int32{lo, hi}] = true
			if !report(c.x, c.y, witness) {
				return false, nil
			}
		case race:
			undecided = true
		}
	}
	return undecided, nil
}

// scopeOrdered decides a pair whose operation a executes before b is
// reached in every execution: b is reached (thread tb frozen at stopB)
// without a happening before its reaching in some execution, with that
// execution's witness, or not (ok false when the game gave up).
func (v *verifier) scopeOrdered(e *engine, a, b int32, tb int32, stopB int32) (witness []schedule.Event, race, ok bool) {
	f := v.f
	e.reset()
	e.freeze(int(tb), stopB)
	e.run()
	reachedB := e.pos[tb] == b && (int(tb) >= f.workers || e.resident || int(tb) < e.started)
	if stopB > b {
		reachedB = e.executed(b)
	}
	if !reachedB {
		return nil, false, true // b is never reached
	}
	trace := f.events(e.trace)
	if stopB > b || b == f.start[tb] {
		// Nothing happens before the reaching of a first operation.
		return trace, true, true
	}
	if schedule.CheckWitness(f.p, CodeRaceScope, []int{int(f.task[a]), int(f.task[b])}, trace) == nil {
		return trace, true, true
	}
	// The relaxation: a withheld a that S' still needs before b-1 happens
	// before it in every execution.
	if f.link == nil {
		f.linkPoints()
	}
	rel := newEngine(f, true)
	defer rel.release()
	rel.reset()
	rel.freeze(int(f.opThread[a]), a)
	rel.run()
	if !rel.executed(b - 1) {
		return nil, false, true
	}
	// The taint game decides what the relaxation cannot.
	g := newGame(f, nil)
	g.srcOp, g.targetOp = a, b-1
	var found []int32
	complete := g.play(make([]bool, len(f.p.Tasks)), func(_ int32, tr []int32) bool {
		found = append([]int32(nil), tr...)
		return false
	})
	if found != nil {
		return f.events(found), true, true
	}
	return nil, false, complete
}

// scopeFinding reports a race.scope pair x (of the lower task) and y.
func (v *verifier) scopeFinding(x, y int32, witness []schedule.Event) Finding {
	f := v.f
	narrow := x
	if f.is(x, fCross) {
		narrow = y
	}
	return Finding{
		Code:    CodeRaceScope,
		Message: v.appendThread(v.appendOp(v.appendThread(v.appendOp(newMsg(), x).s(" ("), f.opThread[x]).s(") and "), y).s(" ("), f.opThread[y]).s(") access counter ").s(f.p.Counters[f.obj[x]].Name).s(" unordered, and a cta scope does not reach across workers: the cta-scoped one may never see the other's update").String(),
		Tasks:   []int{int(f.task[x]), int(f.task[y])},
		Fix:     v.appendOp(newMsg().s("make "), narrow).s(" gpu-scoped").String(),
		Witness: witness,
	}
}
