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
// free for every claim in every state: when fewer dynamic tasks can block
// after their guard than there are resident workers with empty queues
// (those workers are free from the start and only non-simple tasks hold
// one). Worker exit (a worker leaves its slot only once every dynamic
// task has ended) is part of the engine's and the taint game's residency.
// Other programs with dynamic tasks go to the explorer.

// maxScopeRuns bounds the withhold-runs spent on race.scope candidates.
const maxScopeRuns = 256

// dispatchLimited says why the launch's dispatch or worker exit may
// restrict the program's executions beyond what the confluent analyses
// model, or returns "". blocking is the number of dynamic tasks that can
// block after their guard (counted on the program as given: a semaphore's
// acquire blocks even where the counter form turns it into a wait).
func (f *form) dispatchLimited(blocking int) string {
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
	if blocking > 0 && blocking >= empty {
		return fmt.Sprintf("%d dynamic tasks can block after their guard while holding a worker, and %d resident workers have empty queues", blocking, empty)
	}
	return ""
}

// scopeCandidate is a pair of operations that race.scope may relate.
type scopeCandidate struct{ x, y int32 }

// scopeCandidates lists, per counter with a cta-scoped operation, the
// pairs of operations of different threads with at least one signal and at
// least one cta-scoped (at most maxScopeRuns+1 of them).
func (f *form) scopeCandidates() []scopeCandidate {
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
	e.record = true
	done := map[[2]int32]bool{}
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		a, b := f.task[c.x], f.task[c.y]
		if a > b {
			a, b = b, a
			c.x, c.y = c.y, c.x
		}
		if done[[2]int32{a, b}] {
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
				if schedule.CheckWitness(f.p, CodeRaceScope, []int{int(a), int(b)}, witness) != nil {
					undecided = true
					continue
				}
			}
			done[[2]int32{a, b}] = true
			v.add(v.scopeFinding(c.x, c.y, witness))
			continue
		}
		if reached(tx, c.x, stopX) || reached(ty, c.y, stopY) {
			undecided = true
		}
	}
	return undecided, nil
}

// scopeFinding reports a race.scope pair x (of the lower task) and y.
func (v *verifier) scopeFinding(x, y int32, witness []schedule.Event) Finding {
	f := v.f
	narrow := x
	if f.is(x, fCross) {
		narrow = y
	}
	return Finding{
		Code: CodeRaceScope,
		Message: fmt.Sprintf("%s (%s) and %s (%s) access counter %s unordered, and a cta scope does not reach across workers: the cta-scoped one may never see the other's update",
			v.describe(x), v.threadName(f.opThread[x]), v.describe(y), v.threadName(f.opThread[y]), f.p.Counters[f.obj[x]].Name),
		Tasks:   []int{int(f.task[x]), int(f.task[y])},
		Fix:     fmt.Sprintf("make %s gpu-scoped", v.describe(narrow)),
		Witness: witness,
	}
}
