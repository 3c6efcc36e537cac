package verify

import (
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// This file decides semaphore programs with the confluent analyses where
// the semaphores' structure allows it, instead of the explorer.
//
// A semaphore whose acquires all lie in one thread (a ring's producer, a
// credit's single consumer, an allocator) behaves exactly like a monotone
// counter of the tokens released: that thread's i-th acquire, of n_i
// tokens, is enabled when init + released − (n_1 + … + n_{i−1}) ≥ n_i,
// i.e. when released ≥ n_1 + … + n_i − init, because no other thread takes
// tokens. An acquire at gpu/sys scope synchronizes with every gpu/sys
// release executed before it, which is what an acquiring wait on the
// released counter does with its releasing signals. So the semaphore is
// replaced by a 64-bit counter: each release by a signal of its amount
// (same scope), each acquire by a wait for that threshold (same scope).
// Every step keeps its place, so the normal forms match step for step and
// every witness replays on the original program. Validation bounds the
// releases by schedule.MaxTokens, so the counter cannot overflow. This is
// exact: the two programs have the same executions, happens-before and
// stuck states (a stuck acquire is reported as deadlock.semaphore).
//
// A *pool* semaphore (several threads acquire it) qualifies when every
// thread's operations on it alternate acquire n, release n (the same n),
// with no wait, barrier await or acquire between an acquire and its
// release, the initial tokens cover every single acquire, and no step on it
// is cta-scoped (dropping one would hide its race.scope). In a stuck
// state no thread holds its tokens then (a holder's next operations cannot
// block), so no acquire of it is stuck. Dropping its steps (they become cta
// fences, which order nothing) gives a program with more executions and
// less happens-before: if that program is safe, so is the original (its
// executions are among them, each with at least that happens-before; a
// stuck state of the original would be stuck there too). If it is not,
// the explorer decides the original.
//
// A semaphore that one dynamic task's guard acquires twice is neither: the
// claim needs each guard acquire to hold on its own, while the counter's
// thresholds add up, so the counter form would claim the task later (and
// reach its second acquire in fewer states) than the program does.
//
// Any other semaphore sends the program to the explorer. The full
// argument for each fragment is in docs/SEMANTICS.md ("How semaphore
// programs are decided").

// semaphoreMode says how each semaphore is decided.
type semaphoreMode uint8

const (
	semExplore semaphoreMode = iota // the explorer decides the program
	semCounter                      // one acquiring thread: a counter of releases
	semPool                         // balanced, non-blocking holders: dropped
)

// reduceSemaphores returns the counter form of a semaphore program and
// the semaphore of each added counter (indexes of p2.Counters from
// len(p.Counters) on), whether some pool semaphore was dropped, and false
// when some semaphore fits neither fragment.
func reduceSemaphores(p *schedule.Program) (p2 *schedule.Program, semOf []int32, pooled, ok bool) {
	modes := semaphoreModes(p)
	for _, m := range modes {
		if m == semExplore {
			return nil, nil, false, false
		}
	}
	p2 = &schedule.Program{Name: p.Name, Launch: p.Launch, Arenas: p.Arenas, Buffers: p.Buffers, Barriers: p.Barriers}
	p2.Counters = append(make([]schedule.Counter, 0, len(p.Counters)+len(p.Semaphores)), p.Counters...)
	virtual := make([]int32, len(p.Semaphores))
	for s, m := range modes {
		virtual[s] = -1
		if m == semCounter {
			virtual[s] = int32(len(p2.Counters))
			p2.Counters = append(p2.Counters, schedule.Counter{Name: p.Semaphores[s].Name, Width: 64})
			semOf = append(semOf, int32(s))
		} else {
			pooled = true
		}
	}
	acquired := make([]uint64, len(p.Semaphores)) // tokens acquired so far, in the acquiring thread's order
	p2.Tasks = make([]schedule.Task, len(p.Tasks))
	// Tasks are in task-list order, which is each thread's order: a
	// worker's queue, or one dynamic task.
	for i := range p.Tasks {
		t := p.Tasks[i]
		conv := func(list []schedule.Step) []schedule.Step {
			var out []schedule.Step
			for j, s := range list {
				if s.Kind != schedule.Acquire && s.Kind != schedule.Release {
					continue
				}
				if out == nil {
					out = append([]schedule.Step(nil), list...)
				}
				sem := s.Object
				if virtual[sem] < 0 {
					out[j] = schedule.Step{Kind: schedule.Fence, Scope: schedule.ScopeCTA}
					continue
				}
				if s.Kind == schedule.Release {
					out[j] = schedule.Step{Kind: schedule.Signal, Object: virtual[sem], Value: s.Value, Scope: s.Scope}
					continue
				}
				// Saturating: a total past 2^63-1 already exceeds every
				// release total, so an earlier acquire is never granted.
				acquired[sem] = satAdd(acquired[sem], s.Value)
				var need uint64
				if init := p.Semaphores[sem].Tokens; acquired[sem] > init {
					need = acquired[sem] - init
				}
				out[j] = schedule.Step{Kind: schedule.Wait, Object: virtual[sem], Value: need, Scope: s.Scope}
			}
			if out == nil {
				return list
			}
			return out
		}
		t.Before, t.After = conv(t.Before), conv(t.After)
		p2.Tasks[i] = t
	}
	return p2, semOf, pooled, true
}

// semaphoreModes classifies every semaphore of p.
func semaphoreModes(p *schedule.Program) []semaphoreMode {
	n := len(p.Semaphores)
	modes := make([]semaphoreMode, n)
	acquirer := make([]int64, n) // thread of the acquires: worker, or -2-task for a dynamic task; -1 none
	pool := make([]bool, n)
	maxN := make([]uint64, n)
	for s := range acquirer {
		acquirer[s], pool[s] = -1, true
	}
	// Pool shape, per thread: the semaphore held (and how many tokens), or
	// none; a blocking step while holding breaks it.
	type hold struct {
		sem int32
		n   uint64
	}
	holding := map[int64]hold{}
	thread := func(i int) int64 {
		if w := p.Tasks[i].Worker; w != schedule.Dynamic {
			return int64(w)
		}
		return -2 - int64(i)
	}
	single := make([]bool, n)
	for s := range single {
		single[s] = true
	}
	narrow := make([]bool, n) // some operation on it is cta-scoped
	// A dynamic task's claim needs each acquire of its guard to hold on its
	// own, while the counter form's thresholds add up: a semaphore
	// acquired twice in one guard is claimed earlier than its counter, so
	// its later acquire is reached (race.scope) in more states. It is left
	// to the explorer.
	twice := make([]bool, n)
	var guardSems []int32
	for i := range p.Tasks {
		th := thread(i)
		t := &p.Tasks[i]
		guard := !t.Pinned()
		guardSems = guardSems[:0]
		for k, list := range [2][]schedule.Step{t.Before, t.After} {
			if k == 1 {
				guard = false
			}
			for _, s := range list {
				switch {
				case !guard:
				case s.Kind == schedule.Acquire:
					if slices.Contains(guardSems, s.Object) {
						twice[s.Object] = true
					}
					guardSems = append(guardSems, s.Object)
				case s.Kind != schedule.Wait:
					guard = false
				}
				h, held := holding[th]
				if (s.Kind == schedule.Acquire || s.Kind == schedule.Release) && s.Scope == schedule.ScopeCTA {
					narrow[s.Object] = true
				}
				switch s.Kind {
				case schedule.Acquire:
					if acquirer[s.Object] == -1 {
						acquirer[s.Object] = th
					} else if acquirer[s.Object] != th {
						single[s.Object] = false
					}
					maxN[s.Object] = max(maxN[s.Object], s.Value)
					if held {
						// An acquire while holding: the held pool breaks,
						// and so does this one's shape.
						pool[h.sem], pool[s.Object] = false, false
					}
					holding[th] = hold{s.Object, s.Value}
				case schedule.Release:
					if !held || h.sem != s.Object || h.n != s.Value {
						pool[s.Object] = false
						if held {
							pool[h.sem] = false
						}
					}
					delete(holding, th)
				case schedule.Wait, schedule.Sync:
					if held {
						pool[h.sem] = false
					}
				}
			}
		}
	}
	for _, h := range holding {
		pool[h.sem] = false // a thread ends holding tokens
	}
	for s := range modes {
		switch {
		case twice[s]:
		case single[s]:
			modes[s] = semCounter
		case pool[s] && !narrow[s] && p.Semaphores[s].Tokens >= maxN[s]:
			// (Dropping a cta-scoped step would hide its race.scope.)
			modes[s] = semPool
		}
	}
	return modes
}

// nonSimpleDynamic counts the dynamic tasks of p that can block after
// their guard (schedule.Thread.Simple), which hold the worker that claims
// them.
func nonSimpleDynamic(p *schedule.Program) int {
	n := 0
	for i := range p.Tasks {
		t := &p.Tasks[i]
		if t.Pinned() {
			continue
		}
		guard := true // still in the leading waits
		simple := true
		for k, list := range [2][]schedule.Step{t.Before, t.After} {
			if k == 1 {
				guard = false // the body ends the guard
			}
			for _, s := range list {
				switch s.Kind {
				case schedule.Acquire, schedule.Sync:
					simple = false
				case schedule.Wait:
					if !guard {
						simple = false
					}
				default:
					guard = false
				}
			}
		}
		if !simple {
			n++
		}
	}
	return n
}

// semaphoreOf returns the semaphore a counter of the form stands for, or
// -1 for a real counter.
func (v *verifier) semaphoreOf(o int32) int32 {
	if v.semOf == nil {
		return -1
	}
	k := int(o) - len(v.orig.Counters)
	if k < 0 || k >= len(v.semOf) {
		return -1
	}
	return v.semOf[k]
}

// origStep returns the step of the program as given that op x lowers, and
// false for bodies and pre-checks.
func (v *verifier) origStep(x int32) (schedule.Step, bool) {
	f := v.f
	i := f.task[x]
	t := &v.orig.Tasks[i]
	ops := func(s schedule.Step) int32 {
		if s.Kind == schedule.Sync {
			return 2
		}
		return 1
	}
	at := f.body[i] + 1
	list := t.After
	if x < f.body[i] {
		list = t.Before
		at = f.body[i]
		for _, s := range t.Before {
			at -= ops(s)
		}
	}
	for _, s := range list {
		if x >= at && x < at+ops(s) {
			return s, true
		}
		at += ops(s)
	}
	return schedule.Step{}, false
}

// transientDynamic counts the non-simple dynamic tasks of p that can block
// after their guard, and those that cannot stay blocked: once claimed,
// every step they can block at is the first acquire of a semaphore in
// their guard that only they acquire (it held at the claim, and nobody
// else takes its tokens), or an acquire of a pool semaphore (semPool:
// its holders cannot block, so a stuck state finds every token back).
// Such a transient task holds its worker, but in a stuck state it is
// either unclaimed or finished, so the stuck states are those of the
// launch in which it never blocks: with one more empty resident worker
// than the tasks that can block, every claim finds a free worker there
// (dispatchLimited), and a safe verdict of the confluent analyses holds
// for the launch. Their executions are fewer than the analyses model, so
// a finding is left to the explorer. Programs whose semaphores fit
// neither fragment never get here.
func transientDynamic(p *schedule.Program) (blocking, transient int) {
	modes := semaphoreModes(p)
	var seen []int32 // semaphores acquired in the current guard
	for i := range p.Tasks {
		t := &p.Tasks[i]
		if t.Pinned() {
			continue
		}
		guard, simple, stays := true, true, false
		seen = seen[:0]
		for k, list := range [2][]schedule.Step{t.Before, t.After} {
			if k == 1 {
				guard = false // the body ends the guard
			}
			for _, s := range list {
				switch s.Kind {
				case schedule.Sync:
					simple, stays, guard = false, true, false
				case schedule.Wait:
					if !guard {
						simple, stays = false, true
					}
				case schedule.Acquire:
					simple = false
					switch {
					case modes[s.Object] == semPool:
					case guard && modes[s.Object] == semCounter && !slices.Contains(seen, s.Object):
						seen = append(seen, s.Object)
					default:
						stays = true
					}
				default:
					guard = false
				}
			}
		}
		switch {
		case simple:
		case stays:
			blocking++
		default:
			transient++
		}
	}
	return blocking, transient
}
