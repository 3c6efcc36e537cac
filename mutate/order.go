package mutate

import "github.com/megaproof/megaproof/schedule"

// relaxSignal turns one release signal into a relaxed one.
//
// Class: missing release — the counter still reaches the threshold, but the
// producer's writes are not ordered before the waiter's reads. Source: F6
// (mirage PR#461→PR#470), the inferred Hazy/Luce relaxed `atomicAdd`
// signals of docs/FAULTS.md. Expect: race.unsynchronized; safe
// when a gpu-scope fence precedes the signal in its thread or nothing the
// signal published is read elsewhere.
func relaxSignal() *Operator {
	return stepOp("relax-signal",
		"missing release: a release signal made relaxed",
		"F6; Hazy/Luce relaxed atomicAdd (inferred)",
		[]string{"race.unsynchronized"},
		func(_ *schedule.Program, _ stepRef, s schedule.Step) bool {
			return s.Kind == schedule.Signal && !s.Relaxed
		},
		func(q *schedule.Program, ref stepRef, _ *rng) error { ref.step(q).Relaxed = true; return nil })
}

// relaxWait turns one acquire wait into a relaxed one.
//
// Class: missing acquire — a polled flag read relaxed with no trailing
// acquire fence. Source: F6 (mirage PR#461: acquire put on the data slot
// instead of the flag), F7 (spin load without acquire), AutoMegaKernel §4.1
// (relaxed `atomicAdd(c,0)` polling with no fence). Expect:
// race.unsynchronized; safe when a gpu-scope fence follows the wait.
func relaxWait() *Operator {
	return stepOp("relax-wait",
		"missing acquire: an acquire wait made relaxed",
		"F6, F7; AMK §4.1 wait without acquire fence",
		[]string{"race.unsynchronized"},
		func(_ *schedule.Program, _ stepRef, s schedule.Step) bool {
			return s.Kind == schedule.Wait && !s.Relaxed
		},
		func(q *schedule.Program, ref stepRef, _ *rng) error { ref.step(q).Relaxed = true; return nil })
}

// dropFence removes one fence.
//
// Class: missing fence — a relaxed signal or wait loses the fence that gave
// it release or acquire semantics. Source: F6, F12 (missing proxy fence,
// NVIDIA/Fuser#4814), AutoMegaKernel's signal fence (`sync.cuh:55-62`).
// Expect: race.unsynchronized; safe when the fence paired with no relaxed
// operation.
func dropFence() *Operator {
	return stepOp("drop-fence",
		"missing fence: one fence removed",
		"F6, F12",
		[]string{"race.unsynchronized"},
		kindIs(schedule.Fence),
		removeStep)
}

// narrowScope narrows one wait, signal, fence, acquire or release from gpu
// or sys scope to cta scope.
//
// Class: scope too narrow — a cta-scope operation never orders two
// workers, though a cta-scope signal still counts. Source: F6 (ordering "at
// sufficient scope"), AutoMegaKernel §4.1 (gpu scope only; system scope
// needed for multi-GPU). Expect: race.unsynchronized; safe when the
// operation only orders tasks of one thread.
func narrowScope() *Operator {
	return stepOp("narrow-scope",
		"scope too narrow: a synchronization step narrowed to cta scope",
		"F6; AMK §4.1 scope",
		[]string{"race.unsynchronized"},
		func(_ *schedule.Program, _ stepRef, s schedule.Step) bool {
			switch s.Kind {
			case schedule.Wait, schedule.Signal, schedule.Fence, schedule.Acquire, schedule.Release:
				return s.Scope != schedule.ScopeCTA
			}
			return false
		},
		func(q *schedule.Program, ref stepRef, _ *rng) error {
			ref.step(q).Scope = schedule.ScopeCTA
			return nil
		})
}

// swapQueueOrder swaps two tasks that are adjacent in one worker's static
// queue (their positions in the task list are exchanged; every other
// queue keeps its order).
//
// Class: queue order inconsistent with dependencies. Source: AutoMegaKernel
// §2.3 cross_sm_queue_deadlock (SM0=[A,D], SM1=[C,B], rule 6 checks only
// same-SM edges), Hazy static instruction queues. Expect: deadlock.cycle
// (a consumer queued before its producer on the same worker, or a
// cross-worker queue cycle), race (a dependency that only program order
// enforced); safe when the two tasks are independent.
func swapQueueOrder() *Operator {
	pairs := func(p *schedule.Program) [][2]int {
		var ps [][2]int
		for i, prev := range queuePrev(p) {
			if prev >= 0 {
				ps = append(ps, [2]int{prev, i})
			}
		}
		return ps
	}
	return newOp("swap-queue-order",
		"queue order: two adjacent tasks of one worker's queue swapped",
		"AMK §2.3 cross_sm_queue_deadlock; Hazy static queues",
		[]string{"deadlock.cycle", "race"},
		func(p *schedule.Program) int { return len(pairs(p)) },
		func(q *schedule.Program, site int, _ *rng) error {
			pr := pairs(q)[site]
			q.Tasks[pr[0]], q.Tasks[pr[1]] = q.Tasks[pr[1]], q.Tasks[pr[0]]
			return nil
		})
}

// moveTask pins one task to a different, seed-chosen worker, keeping its
// place in the task list (so it joins that worker's queue at the position
// its list index gives). A dynamic task becomes pinned.
//
// Class: wrong placement. Source: F2 (placement-dependent schedules), the
// inferred Hazy `%smid` indexing hazard (a queue run by another SM),
// AutoMegaKernel's loader sending every unpinned task to SM 0. Expect:
// deadlock.cycle (queue order against dependencies), race (tasks that
// shared a worker were ordered by program order only); safe when the task
// is independent of its new neighbours, and always safe when the task list
// is in topological order and every dependency is an explicit wait (as in
// llamagen's counter schedules, where sampled move-task mutants all came
// out safe).
func moveTask() *Operator {
	pred := func(p *schedule.Program, t int) bool {
		if p.Tasks[t].Pinned() {
			return p.Launch.Workers >= 2
		}
		return p.Launch.Workers >= 1
	}
	count := func(p *schedule.Program) int {
		n := 0
		for t := range p.Tasks {
			if pred(p, t) {
				n++
			}
		}
		return n
	}
	return newOp("move-task",
		"wrong placement: a task pinned to another worker",
		"F2; Hazy %smid queues (inferred); AMK loader placement",
		[]string{"deadlock.cycle", "race"},
		count,
		func(q *schedule.Program, site int, r *rng) error {
			t := -1
			for i := range q.Tasks {
				if pred(q, i) {
					if site == 0 {
						t = i
						break
					}
					site--
				}
			}
			if t < 0 {
				return notApplicable("no task site")
			}
			tk := &q.Tasks[t]
			w := q.Launch.Workers
			if tk.Pinned() {
				tk.Worker = int32((int(tk.Worker) + 1 + r.intn(w-1)) % w)
			} else {
				tk.Worker = int32(r.intn(w))
			}
			return nil
		})
}

// exceedCapacity makes the launch need more co-resident workers than the
// target provides. Cooperative launches have two sites: site 0 grows the
// grid to capacity + 1 workers; site 1 shrinks the target (SMs × per-SM)
// below the worker count. Non-cooperative launches have one site that
// shrinks the target the same way, provided some pinned task has a blocking
// step (wait, sync or acquire): otherwise no worker can hold a slot while
// waiting, and residency cannot matter. With m = min(workers, old
// capacity), the new capacity is m − 1 for about half of the seeds and a
// seed-chosen value in [1, m − 1] for the others.
//
// Class: co-residency deadlock (grid larger than the resident CTAs).
// Source: F1 (NVIDIA/cub#369, FlashMoE#3, Luce `7daf422`: grid sized for a
// bigger GPU), F2, AutoMegaKernel's loader (grid vs occupancy, SM count from
// the program, not the device). Expect: occupancy; safe for
// non-cooperative launches whose waiters never depend on later workers.
func exceedCapacity() *Operator {
	type kind int
	const (
		grow kind = iota
		shrink
	)
	sites := func(p *schedule.Program) []kind {
		l := p.Launch
		var ks []kind
		if l.Cooperative && l.Capacity() >= l.Workers && l.Capacity() < schedule.MaxWorkers {
			ks = append(ks, grow)
		}
		if min(l.Workers, l.Capacity()) >= 2 && (l.Cooperative || pinnedBlocks(p)) {
			ks = append(ks, shrink)
		}
		return ks
	}
	return newOp("exceed-capacity",
		"co-residency: more workers than the target keeps resident",
		"F1, F2; AMK loader grid vs occupancy",
		[]string{"occupancy"},
		func(p *schedule.Program) int { return len(sites(p)) },
		func(q *schedule.Program, site int, r *rng) error {
			l := &q.Launch
			if sites(q)[site] == grow {
				l.Workers = l.Capacity() + 1
				return nil
			}
			m := min(l.Workers, l.Capacity())
			t := m - 1
			if r.next()%2 == 1 {
				t = 1 + r.intn(m-1)
			}
			if t%l.PerSM == 0 {
				l.SMs = t / l.PerSM
			} else {
				l.SMs, l.PerSM = t, 1
			}
			return nil
		})
}

// dropBarrierStep removes one barrier sync or arrive.
//
// Class: non-uniform barrier participation. Source: F5 (predibase/lorax
// PR#156 `grid.sync()` count varies per block; vllm PR#26026 arrive without
// wait), F14. Expect: deadlock.barrier (a generation never completes), race
// (a dropped sync no longer orders its task).
func dropBarrierStep() *Operator {
	return stepOp("drop-barrier-step",
		"uneven barrier participation: one sync or arrive removed",
		"F5, F14",
		[]string{"deadlock.barrier", "race"},
		kindIs(schedule.Sync, schedule.Arrive),
		removeStep)
}

// barrierPartiesUp adds one to a barrier's party count.
//
// Class: barrier count off by one (too many expected). Source: F13
// (tenstorrent/tt-metal PR#51773: two groups with different counts share a
// barrier slot), F5. Expect: deadlock.barrier.
func barrierPartiesUp() *Operator {
	idx := func(p *schedule.Program) []int {
		var bs []int
		for i, b := range p.Barriers {
			if b.Parties < schedule.MaxTasks {
				bs = append(bs, i)
			}
		}
		return bs
	}
	return newOp("barrier-parties-up",
		"barrier count off by one: parties + 1",
		"F13, F5",
		[]string{"deadlock.barrier"},
		func(p *schedule.Program) int { return len(idx(p)) },
		func(q *schedule.Program, site int, _ *rng) error { q.Barriers[idx(q)[site]].Parties++; return nil })
}

// barrierPartiesDown subtracts one from a barrier's party count (barriers
// with at least two parties).
//
// Class: barrier count off by one (too few expected) — a generation
// completes before its last participant arrives, and later generations
// drift. Source: F13, F8 (fast participant re-arrives for the next round).
// Expect: race; deadlock.barrier when generations drift apart.
func barrierPartiesDown() *Operator {
	idx := func(p *schedule.Program) []int {
		var bs []int
		for i, b := range p.Barriers {
			if b.Parties >= 2 {
				bs = append(bs, i)
			}
		}
		return bs
	}
	return newOp("barrier-parties-down",
		"barrier count off by one: parties − 1",
		"F13, F8",
		[]string{"race", "deadlock.barrier"},
		func(p *schedule.Program) int { return len(idx(p)) },
		func(q *schedule.Program, site int, _ *rng) error { q.Barriers[idx(q)[site]].Parties--; return nil })
}

// dropRelease removes one semaphore release: an acquire without its
// release.
//
// Class: leaked token (no credit returned). Source: F11 (mirage#464:
// bounded ring without credit flow control), NVIDIA/cutlass#1296 (serial
// split-K semaphore hang). Expect: deadlock.semaphore; safe when the
// semaphore had spare tokens.
func dropRelease() *Operator {
	return stepOp("drop-release",
		"leaked token: one semaphore release removed",
		"F11; NVIDIA/cutlass#1296",
		[]string{"deadlock.semaphore"},
		kindIs(schedule.Release),
		removeStep)
}

// swapAcquireOrder swaps one acquire of a task with the task's next acquire
// on a different semaphore in the same step list.
//
// Class: opposite acquire order (lock-order inversion). Source:
// NVIDIA/cutlass#1296 (split-K semaphore hang), F11 (credit protocols).
// Expect: deadlock.semaphore when another task acquires in the original
// order and tokens are scarce; safe otherwise.
func swapAcquireOrder() *Operator {
	next := func(l []schedule.Step, j int) int {
		for k := j + 1; k < len(l); k++ {
			if l[k].Kind == schedule.Acquire {
				if l[k].Object != l[j].Object {
					return k
				}
				return -1
			}
		}
		return -1
	}
	return stepOp("swap-acquire-order",
		"lock-order inversion: two acquires of a task swapped",
		"NVIDIA/cutlass#1296; F11",
		[]string{"deadlock.semaphore"},
		func(p *schedule.Program, ref stepRef, s schedule.Step) bool {
			return s.Kind == schedule.Acquire && next(*ref.list(p), ref.idx) >= 0
		},
		func(q *schedule.Program, ref stepRef, _ *rng) error {
			l := *ref.list(q)
			k := next(l, ref.idx)
			l[ref.idx], l[k] = l[k], l[ref.idx]
			return nil
		})
}

// pinnedBlocks reports whether some pinned task has a step that can block
// (wait, barrier sync, semaphore acquire).
func pinnedBlocks(p *schedule.Program) bool {
	for i := range p.Tasks {
		t := &p.Tasks[i]
		if !t.Pinned() {
			continue
		}
		for _, l := range [][]schedule.Step{t.Before, t.After} {
			for _, s := range l {
				if s.Kind == schedule.Wait || s.Kind == schedule.Sync || s.Kind == schedule.Acquire {
					return true
				}
			}
		}
	}
	return false
}
