package mutate

import (
	"fmt"
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// This file holds the operators of the protocol faults that need more than
// one step edited (an acquire moved between two loads, two barriers merged),
// the scope faults of race.scope and of sys scope, the dispatch faults of
// dynamic tasks, and the skipped credit acquire.

// moveAcquire moves the acquire of one wait onto another wait of the same
// step list: the site's wait becomes relaxed and a seed-chosen wait on a
// different counter in the same list becomes an acquire (a relaxed one is
// preferred when the list has some, so the acquire truly moves).
//
// Class: acquire on the wrong load — the task still performs an acquire
// load, but not on the counter whose producers' writes it reads. Source: F6
// (mirage PR#461 → PR#470: the acquire sat on the data-slot load instead of
// the flag load; fleet-chiplet PR#6). Expect: race.unsynchronized; safe when
// the relaxed wait's producers publish nothing the task reads, or a gpu
// fence follows the relaxed wait.
func moveAcquire() *Operator {
	// partners returns the waits of l, other than j, on a counter other than
	// l[j]'s.
	partners := func(l []schedule.Step, j int) []int {
		var ks []int
		for k, s := range l {
			if k != j && s.Kind == schedule.Wait && s.Object != l[j].Object {
				ks = append(ks, k)
			}
		}
		return ks
	}
	return stepOp("move-acquire",
		"acquire on the wrong load: one wait relaxed, another strengthened",
		"F6 (mirage PR#461→PR#470; fleet-chiplet PR#6)",
		[]string{"race.unsynchronized"},
		func(p *schedule.Program, ref stepRef, s schedule.Step) bool {
			return s.Kind == schedule.Wait && !s.Relaxed && len(partners(*ref.list(p), ref.idx)) > 0
		},
		func(q *schedule.Program, ref stepRef, r *rng) error {
			l := *ref.list(q)
			ks := partners(l, ref.idx)
			if relaxed := slices.DeleteFunc(slices.Clone(ks), func(k int) bool { return !l[k].Relaxed }); len(relaxed) > 0 {
				ks = relaxed
			}
			k := ks[r.intn(len(ks))]
			l[ref.idx].Relaxed = true
			l[k].Relaxed = false
			return nil
		})
}

// skipAcquire removes one semaphore acquire and keeps everything else,
// the task's releases included.
//
// Class: a producer that skips its credit acquire and overwrites a slot of
// a bounded ring (or a page of a pool) that a consumer still reads; the
// releases it keeps hand out tokens nobody took. Source: F11 (mirage#464:
// a producer that never checks the consumer's head). Expect: race (the
// overwrite of a slot still being read), uninitialized-read (a consumer
// admitted by a token the producer did not earn); safe when the semaphore
// had spare tokens.
func skipAcquire() *Operator {
	return stepOp("skip-acquire",
		"credit skipped: one semaphore acquire removed, its releases kept",
		"F11 (mirage#464)",
		[]string{"race", "uninitialized-read"},
		kindIs(schedule.Acquire),
		removeStep)
}

// mergeBarriers moves every step on one barrier onto another: the two
// groups now share one barrier, which keeps the party count of the barrier
// it lands on. Sites are the ordered pairs (into, from) of distinct
// barriers where from has at least one step and the two differ in parties
// or in the threads that use them (two barriers of the same group and
// count merge harmlessly); from stays declared, unused.
//
// Class: named-barrier id collision — two groups with different
// participant counts arrive at one barrier, so generations complete with
// the wrong members or never. Source: F13 (tenstorrent/tt-metal PR#51773).
// Expect: deadlock.barrier (a generation that never fills), race (a
// generation filled by the other group's arrivals releases a waiter early).
func mergeBarriers() *Operator {
	pairs := func(p *schedule.Program) [][2]int32 {
		// Each barrier's participants: the threads of its steps, in
		// first-use order per barrier.
		th := threads(p)
		parts := make([][]int, len(p.Barriers))
		eachStep(p, func(ref stepRef, s schedule.Step) bool {
			if (s.Kind == schedule.Sync || s.Kind == schedule.Arrive) && s.Object >= 0 && int(s.Object) < len(parts) {
				if t := th[ref.task]; !slices.Contains(parts[s.Object], t) {
					parts[s.Object] = append(parts[s.Object], t)
				}
			}
			return true
		})
		for _, l := range parts {
			slices.Sort(l)
		}
		var ps [][2]int32
		for into := range p.Barriers {
			for from := range p.Barriers {
				if from == into || len(parts[from]) == 0 {
					continue
				}
				if p.Barriers[from].Parties != p.Barriers[into].Parties || !slices.Equal(parts[from], parts[into]) {
					ps = append(ps, [2]int32{int32(into), int32(from)})
				}
			}
		}
		return ps
	}
	return newOp("merge-barriers",
		"barrier id collision: two barrier groups merged onto one barrier",
		"F13 (tenstorrent/tt-metal PR#51773)",
		[]string{"deadlock.barrier", "race"},
		func(p *schedule.Program) int { return len(pairs(p)) },
		func(q *schedule.Program, site int, _ *rng) error {
			pr := pairs(q)[site]
			eachStep(q, func(ref stepRef, s schedule.Step) bool {
				if (s.Kind == schedule.Sync || s.Kind == schedule.Arrive) && s.Object == pr[1] {
					ref.step(q).Object = pr[0]
				}
				return true
			})
			return nil
		})
}

// narrowSysScope narrows one sys-scoped wait, signal, fence, acquire or
// release to gpu scope.
//
// Class: gpu↔sys scope narrowing — in a runtime, a counter that another
// GPU or the host signals (NVSHMEM, mapped host memory) polled or
// published at gpu scope. The model has no participant outside the GPU:
// every thread is a worker or a task of the one launch, and gpu and sys
// scope order exactly the same pairs of threads (docs/SEMANTICS.md). So
// the mutant is equivalent to its input: this operator is a control that
// keeps its seed's verdict and codes, and catches a verifier that tells the
// two scopes apart. The narrowing that the model does see, sys to cta, is
// narrow-scope's. Source: F6 ("at sufficient scope"), mirage's
// `ld.acquire.sys` event polling (NVSHMEM-signalled counters). Expect:
// safe (the input's own findings, nothing more).
func narrowSysScope() *Operator {
	return stepOp("narrow-sys-scope",
		"sys scope narrowed to gpu (equivalent in the model: no participant outside the GPU)",
		"F6; mirage ld.acquire.sys event polling",
		[]string{"safe"},
		func(_ *schedule.Program, _ stepRef, s schedule.Step) bool {
			switch s.Kind {
			case schedule.Wait, schedule.Signal, schedule.Fence, schedule.Acquire, schedule.Release:
				return s.Scope == schedule.ScopeSys
			}
			return false
		},
		func(q *schedule.Program, ref stepRef, _ *rng) error {
			ref.step(q).Scope = schedule.ScopeGPU
			return nil
		})
}

// threads returns each task's normal-form thread: its worker, or
// Workers + its rank among the dynamic tasks.
func threads(p *schedule.Program) []int {
	th := make([]int, len(p.Tasks))
	d := 0
	for i := range p.Tasks {
		if w := p.Tasks[i].Worker; w != schedule.Dynamic {
			th[i] = int(w)
		} else {
			th[i] = p.Launch.Workers + d
			d++
		}
	}
	return th
}

// syncObject returns a key for the counter or semaphore a step operates on
// (counters k ≥ 0 as 2k, semaphores as 2k+1), and whether the step
// modifies it; ok is false for other steps.
func syncObject(s schedule.Step) (key int64, modifies, ok bool) {
	switch s.Kind {
	case schedule.Wait:
		return 2 * int64(s.Object), false, true
	case schedule.Signal:
		return 2 * int64(s.Object), true, true
	case schedule.Acquire, schedule.Release:
		return 2*int64(s.Object) + 1, true, true
	}
	return 0, false, false
}

// narrowSharedScope narrows to cta scope one gpu- or sys-scoped wait,
// signal, acquire or release whose counter or semaphore another thread
// also operates on, where one of the two modifies it (a signal, acquire or
// release). Unlike narrow-scope it picks only steps whose narrowing makes
// a cross-thread operation on the object cta-scoped.
//
// Class: a sync object shared across workers at cta scope — on an H200 a
// cta-scoped spin never sees another SM's update (docs/GPU.md). Source: F6
// ("at sufficient scope"), AMK §4.1 scope. Expect: race.scope; safe only
// when the two threads can never reach the object concurrently (one
// always finished with it before the other reaches it, ordered by
// happens-before).
func narrowSharedScope() *Operator {
	sites := func(p *schedule.Program) []stepRef {
		th := threads(p)
		// Per object, the first two distinct threads seen, for any use and
		// for modifying uses: enough to tell whether another thread than a
		// given one uses (or modifies) the object.
		type two struct{ a, b int }
		use, mod := map[int64]*two{}, map[int64]*two{}
		note := func(m map[int64]*two, k int64, t int) {
			e := m[k]
			switch {
			case e == nil:
				m[k] = &two{t, -1}
			case e.a != t && e.b < 0:
				e.b = t
			}
		}
		other := func(m map[int64]*two, k int64, t int) bool {
			e := m[k]
			return e != nil && (e.a != t || e.b >= 0)
		}
		eachStep(p, func(ref stepRef, s schedule.Step) bool {
			if k, m, ok := syncObject(s); ok {
				note(use, k, th[ref.task])
				if m {
					note(mod, k, th[ref.task])
				}
			}
			return true
		})
		var refs []stepRef
		eachStep(p, func(ref stepRef, s schedule.Step) bool {
			k, m, ok := syncObject(s)
			if !ok || s.Scope == schedule.ScopeCTA {
				return true
			}
			t := th[ref.task]
			if (m && other(use, k, t)) || (!m && other(mod, k, t)) {
				refs = append(refs, ref)
			}
			return true
		})
		return refs
	}
	return newOp("narrow-shared-scope",
		"sync object shared across threads: one of its operations narrowed to cta scope",
		"F6; AMK §4.1 scope",
		[]string{"race.scope"},
		func(p *schedule.Program) int { return len(sites(p)) },
		func(q *schedule.Program, site int, _ *rng) error {
			sites(q)[site].step(q).Scope = schedule.ScopeCTA
			return nil
		})
}

// simpleDynamic reports whether t is a dynamic task that is simple
// (docs/SEMANTICS.md, dispatch): its guard, the longest prefix of waits and
// acquires of its steps, holds only waits, and no wait, barrier sync or
// acquire follows it.
func simpleDynamic(t *schedule.Task) bool {
	if t.Pinned() {
		return false
	}
	guard := true
	for _, l := range [][]schedule.Step{t.Before, nil, t.After} {
		if l == nil {
			guard = false // the body ends every guard
			continue
		}
		for _, s := range l {
			if guard {
				switch s.Kind {
				case schedule.Wait:
					continue
				case schedule.Acquire:
					return false
				}
				guard = false
			}
			if s.Kind == schedule.Wait || s.Kind == schedule.Sync || s.Kind == schedule.Acquire {
				return false
			}
		}
	}
	return true
}

// claimBeforeReady puts a cta fence in front of the waits of one simple
// dynamic task whose first step is a wait. The fence orders nothing across
// threads, but it ends the task's guard: the task is claimed before its
// dependencies are met and then holds its worker while it spins.
//
// Class: a dynamic task made non-simple — dispatched before it is ready, it
// keeps a worker that its producers may need. Source: F19 (a scheduler
// that strands claimable work), F1 (spinning blocks occupy the slots their
// signallers need), MPK's workers that take a task and then spin on its
// dependency. Expect: occupancy (every free worker held by a spinning
// task while its producers are unclaimed); safe when a worker stays free.
func claimBeforeReady() *Operator {
	pred := func(t *schedule.Task) bool {
		return simpleDynamic(t) && len(t.Before) > 0 && t.Before[0].Kind == schedule.Wait
	}
	idx := func(p *schedule.Program) []int {
		var ts []int
		for i := range p.Tasks {
			if pred(&p.Tasks[i]) {
				ts = append(ts, i)
			}
		}
		return ts
	}
	return newOp("claim-before-ready",
		"dispatch: a dynamic task claimed before its waits hold (made non-simple)",
		"F19, F1; MPK claim-then-spin workers",
		[]string{"occupancy"},
		func(p *schedule.Program) int { return len(idx(p)) },
		func(q *schedule.Program, site int, _ *rng) error {
			t := &q.Tasks[idx(q)[site]]
			t.Before = slices.Insert(t.Before, 0, schedule.Step{Kind: schedule.Fence, Scope: schedule.ScopeCTA})
			return nil
		})
}

// holdWorkers adds a new barrier of R+1 parties, R = min(workers,
// capacity) the workers that can be resident at once, and makes R+1
// consecutive dynamic tasks sync on it as their last step (after their
// signals, so no dependency waits on the barrier). Site s starts the group
// at the s-th dynamic task in list order; sites exist when the program has
// at least R+1 dynamic tasks.
//
// Class: dynamic tasks that hold their workers at a barrier: R of them
// hold every resident worker, and the last party can never be claimed. In
// the unbounded launch every task has a worker of its own and the barrier
// fills. Source: F14 and F5 (barriers that only some roles reach), F1
// (waiters occupying the slots their partner needs), cooperative-groups
// grid sync from inside dynamically scheduled work. Expect: occupancy.
func holdWorkers() *Operator {
	resident := func(p *schedule.Program) int { return min(p.Launch.Workers, p.Launch.Capacity()) }
	dyn := func(p *schedule.Program) []int {
		var ts []int
		for i := range p.Tasks {
			if !p.Tasks[i].Pinned() {
				ts = append(ts, i)
			}
		}
		return ts
	}
	sites := func(p *schedule.Program) int {
		r := resident(p)
		if r < 1 || r >= schedule.MaxTasks {
			return 0
		}
		return max(len(dyn(p))-r, 0)
	}
	return newOp("hold-workers",
		"dispatch: R+1 dynamic tasks sync on one barrier while R workers can be resident",
		"F14, F5, F1",
		[]string{"occupancy"},
		sites,
		func(q *schedule.Program, site int, _ *rng) error {
			r := resident(q)
			used := make(map[string]bool, len(q.Barriers))
			for _, b := range q.Barriers {
				used[b.Name] = true
			}
			name := "mutate.hold"
			for i := 1; used[name]; i++ {
				name = fmt.Sprintf("mutate.hold.%d", i)
			}
			b := int32(len(q.Barriers))
			q.Barriers = append(q.Barriers, schedule.Barrier{Name: name, Parties: r + 1})
			for _, ti := range dyn(q)[site : site+r+1] {
				t := &q.Tasks[ti]
				t.After = append(t.After, schedule.Step{Kind: schedule.Sync, Object: b})
			}
			return nil
		})
}
