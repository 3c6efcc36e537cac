package verify

import "github.com/megaproof/megaproof/schedule"

// Operation kinds of the verifier's flat normal form. A barrier is an
// object like a counter: Arrive adds 1 and Await waits for generation ×
// parties arrivals. A body is one operation (the schedule's Begin/End pair).
const (
	kWait uint8 = iota + 1
	kAdd
	kBody
	kFence
	kAcquire
	kRelease
)

// form is a program in flat normal form: threads 0..workers-1 are static
// workers, the rest dynamic tasks; thread t owns ops [start[t], start[t+1]).
// Objects are counters [0, nc) then barriers [nc, nc+nb).
type form struct {
	p         *schedule.Program
	workers   int
	nc, nb    int
	start     []int32
	kind      []uint8
	obj       []int32
	val       []uint64
	task      []int32
	relaxed   []bool   // wait or add is relaxed
	cross     []bool   // scope spans workers
	rp        []int32  // add: release point (itself, an earlier fence, or -1)
	ap        []int32  // wait: acquire point (itself, a later fence, or -1)
	barrier   []bool   // op is on a barrier
	body      []int32  // task -> op index of its body
	taskTh    []int32  // task -> thread
	opThread  []int32  // op -> thread
	init      []uint64 // object -> initial value
	total     []uint64 // object -> init + sum of every add (saturating)
	syncing   bool     // every edge synchronizes and all workers are resident
	semaphore bool     // the program uses semaphores
}

func lowerForm(p *schedule.Program) *form {
	nc, nb := len(p.Counters), len(p.Barriers)
	f := &form{p: p, workers: p.Launch.Workers, nc: nc, nb: nb}
	// Queue of each worker in task-list order, then dynamic tasks.
	perWorker := make([]int32, f.workers+1)
	nDyn := 0
	for i := range p.Tasks {
		if w := p.Tasks[i].Worker; w == schedule.Dynamic {
			nDyn++
		} else {
			perWorker[w+1]++
		}
	}
	for w := 1; w <= f.workers; w++ {
		perWorker[w] += perWorker[w-1]
	}
	order := make([]int32, len(p.Tasks))
	fill := append([]int32(nil), perWorker[:f.workers]...)
	dyn := int32(perWorker[f.workers])
	f.taskTh = make([]int32, len(p.Tasks))
	nth := f.workers + nDyn
	for i := range p.Tasks {
		if w := p.Tasks[i].Worker; w == schedule.Dynamic {
			order[dyn] = int32(i)
			f.taskTh[i] = int32(f.workers) + dyn - perWorker[f.workers]
			dyn++
		} else {
			order[fill[w]] = int32(i)
			fill[w]++
			f.taskTh[i] = w
		}
	}
	nops := 0
	for i := range p.Tasks {
		t := &p.Tasks[i]
		nops++
		for _, s := range t.Before {
			nops++
			if s.Kind == schedule.Sync {
				nops++
			}
		}
		for _, s := range t.After {
			nops++
			if s.Kind == schedule.Sync {
				nops++
			}
		}
	}
	f.start = make([]int32, nth+1)
	f.kind = make([]uint8, 0, nops)
	f.obj = make([]int32, 0, nops)
	f.val = make([]uint64, 0, nops)
	f.task = make([]int32, 0, nops)
	f.relaxed = make([]bool, 0, nops)
	f.cross = make([]bool, 0, nops)
	f.barrier = make([]bool, 0, nops)
	f.body = make([]int32, len(p.Tasks))
	f.init = make([]uint64, nc+nb)
	for i, c := range p.Counters {
		f.init[i] = c.Init
	}
	gen := make([]uint64, nb) // per barrier: ops of the current thread so far
	var touched []int32
	emit := func(task int32, k uint8, obj int32, v uint64, relaxed, cross, bar bool) {
		f.kind = append(f.kind, k)
		f.obj = append(f.obj, obj)
		f.val = append(f.val, v)
		f.task = append(f.task, task)
		f.relaxed = append(f.relaxed, relaxed)
		f.cross = append(f.cross, cross)
		f.barrier = append(f.barrier, bar)
	}
	step := func(task int32, s schedule.Step) {
		switch s.Kind {
		case schedule.Wait:
			emit(task, kWait, s.Object, s.Value, s.Relaxed, s.Scope.CrossWorker(), false)
		case schedule.Signal:
			emit(task, kAdd, s.Object, s.Value, s.Relaxed, s.Scope.CrossWorker(), false)
		case schedule.Sync, schedule.Arrive:
			if gen[s.Object] == 0 {
				touched = append(touched, s.Object)
			}
			gen[s.Object]++
			emit(task, kAdd, int32(nc)+s.Object, 1, false, true, true)
			if s.Kind == schedule.Sync {
				emit(task, kWait, int32(nc)+s.Object, gen[s.Object]*uint64(p.Barriers[s.Object].Parties), false, true, true)
			}
		case schedule.Acquire:
			f.semaphore = true
			emit(task, kAcquire, s.Object, s.Value, false, s.Scope.CrossWorker(), false)
		case schedule.Release:
			f.semaphore = true
			emit(task, kRelease, s.Object, s.Value, false, s.Scope.CrossWorker(), false)
		case schedule.Fence:
			emit(task, kFence, 0, 0, false, s.Scope.CrossWorker(), false)
		}
	}
	// Emit thread by thread.
	for t := 0; t < nth; t++ {
		f.start[t] = int32(len(f.kind))
		var lo, hi int32
		if t < f.workers {
			lo, hi = perWorker[t], perWorker[t+1]
		} else {
			lo = perWorker[f.workers] + int32(t-f.workers)
			hi = lo + 1
		}
		for _, o := range touched {
			gen[o] = 0
		}
		touched = touched[:0]
		for _, ti := range order[lo:hi] {
			tk := &p.Tasks[ti]
			for _, s := range tk.Before {
				step(ti, s)
			}
			f.body[ti] = int32(len(f.kind))
			emit(ti, kBody, 0, 0, false, true, false)
			for _, s := range tk.After {
				step(ti, s)
			}
		}
	}
	f.start[nth] = int32(len(f.kind))
	f.opThread = make([]int32, len(f.kind))
	for t := 0; t < nth; t++ {
		for x := f.start[t]; x < f.start[t+1]; x++ {
			f.opThread[x] = int32(t)
		}
	}
	// Release and acquire points, totals, and whether every edge synchronizes.
	f.rp = make([]int32, len(f.kind))
	f.ap = make([]int32, len(f.kind))
	f.total = append([]uint64(nil), f.init...)
	f.syncing = p.Launch.Cooperative || p.Launch.Capacity() >= p.Launch.Workers
	for t := 0; t < nth; t++ {
		lastFence := int32(-1)
		for x := f.start[t]; x < f.start[t+1]; x++ {
			f.rp[x], f.ap[x] = -1, -1
			switch f.kind[x] {
			case kFence:
				if f.cross[x] {
					lastFence = x
				}
			case kAdd:
				o := f.obj[x]
				f.total[o] = satAdd(f.total[o], f.val[x])
				if f.cross[x] {
					if !f.relaxed[x] {
						f.rp[x] = x
					} else {
						f.rp[x] = lastFence
					}
				}
				if f.rp[x] != x {
					f.syncing = false
				}
			}
		}
		nextFence := int32(-1)
		for x := f.start[t+1] - 1; x >= f.start[t]; x-- {
			switch f.kind[x] {
			case kFence:
				if f.cross[x] {
					nextFence = x
				}
			case kWait:
				if f.cross[x] {
					if !f.relaxed[x] {
						f.ap[x] = x
					} else {
						f.ap[x] = nextFence
					}
				}
				if f.ap[x] != x {
					f.syncing = false
				}
			}
		}
	}
	return f
}

func satAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return ^uint64(0)
}

func (f *form) threads() int { return len(f.start) - 1 }
