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
	p       *schedule.Program
	workers int
	nc, nb  int
	start   []int32
	kind    []uint8
	obj     []int32
	val     []uint64
	task    []int32
	flags   []uint8 // fRelaxed, fCross, fBarrier
	// link is, for an add, its release point (itself, an earlier fence, or
	// -1) and, for a wait, its acquire point (itself, a later fence, or -1).
	link      []int32
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
	// Pass 1, in task order: each task's thread and the ops per thread.
	f.taskTh = make([]int32, len(p.Tasks))
	nth := f.workers
	for i := range p.Tasks {
		if w := p.Tasks[i].Worker; w == schedule.Dynamic {
			f.taskTh[i] = int32(nth)
			nth++
		} else {
			f.taskTh[i] = w
		}
	}
	f.start = make([]int32, nth+1)
	for i := range p.Tasks {
		t := &p.Tasks[i]
		n := int32(1 + len(t.Before) + len(t.After))
		for _, s := range t.Before {
			if s.Kind == schedule.Sync {
				n++
			}
		}
		for _, s := range t.After {
			if s.Kind == schedule.Sync {
				n++
			}
		}
		f.start[f.taskTh[i]+1] += n
	}
	for t := 1; t <= nth; t++ {
		f.start[t] += f.start[t-1]
	}
	nops := int(f.start[nth])
	f.kind = make([]uint8, nops)
	f.obj = make([]int32, nops)
	f.val = make([]uint64, nops)
	f.task = make([]int32, nops)
	f.flags = make([]uint8, nops)
	f.opThread = make([]int32, nops)
	f.body = make([]int32, len(p.Tasks))
	f.init = make([]uint64, nc+nb)
	for i, c := range p.Counters {
		f.init[i] = c.Init
	}
	// Pass 2, in task order: write each task's ops at its thread's cursor
	// (a worker's queue is its tasks in list order).
	cursor := append([]int32(nil), f.start[:nth]...)
	gen := map[[2]int32]uint64{} // (thread, barrier) -> operations so far
	var th int32
	emit := func(task int32, k uint8, obj int32, v uint64, relaxed, cross, bar bool) {
		x := cursor[th]
		cursor[th]++
		f.kind[x], f.obj[x], f.val[x], f.task[x] = k, obj, v, task
		var fl uint8
		if relaxed {
			fl |= fRelaxed
		}
		if cross {
			fl |= fCross
		}
		if bar {
			fl |= fBarrier
		}
		f.flags[x], f.opThread[x] = fl, th
	}
	step := func(task int32, s schedule.Step) {
		switch s.Kind {
		case schedule.Wait:
			emit(task, kWait, s.Object, s.Value, s.Relaxed, s.Scope.CrossWorker(), false)
		case schedule.Signal:
			emit(task, kAdd, s.Object, s.Value, s.Relaxed, s.Scope.CrossWorker(), false)
		case schedule.Sync, schedule.Arrive:
			key := [2]int32{th, s.Object}
			gen[key]++
			emit(task, kAdd, int32(nc)+s.Object, 1, false, true, true)
			if s.Kind == schedule.Sync {
				emit(task, kWait, int32(nc)+s.Object, gen[key]*uint64(p.Barriers[s.Object].Parties), false, true, true)
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
	for i := range p.Tasks {
		tk := &p.Tasks[i]
		th = f.taskTh[i]
		for _, s := range tk.Before {
			step(int32(i), s)
		}
		f.body[i] = cursor[th]
		emit(int32(i), kBody, 0, 0, false, true, false)
		for _, s := range tk.After {
			step(int32(i), s)
		}
	}
	// Release and acquire points, totals, and whether every edge synchronizes.
	f.link = make([]int32, len(f.kind))
	f.total = append([]uint64(nil), f.init...)
	f.syncing = p.Launch.Cooperative || p.Launch.Capacity() >= p.Launch.Workers
	for t := 0; t < nth; t++ {
		lastFence := int32(-1)
		for x := f.start[t]; x < f.start[t+1]; x++ {
			f.link[x] = -1
			switch f.kind[x] {
			case kFence:
				if f.is(x, fCross) {
					lastFence = x
				}
			case kAdd:
				o := f.obj[x]
				f.total[o] = satAdd(f.total[o], f.val[x])
				if f.is(x, fCross) {
					if !f.is(x, fRelaxed) {
						f.link[x] = x
					} else {
						f.link[x] = lastFence
					}
				}
				if f.link[x] != x {
					f.syncing = false
				}
			}
		}
		nextFence := int32(-1)
		for x := f.start[t+1] - 1; x >= f.start[t]; x-- {
			switch f.kind[x] {
			case kFence:
				if f.is(x, fCross) {
					nextFence = x
				}
			case kWait:
				if f.is(x, fCross) {
					if !f.is(x, fRelaxed) {
						f.link[x] = x
					} else {
						f.link[x] = nextFence
					}
				}
				if f.link[x] != x {
					f.syncing = false
				}
			}
		}
	}
	return f
}

// Operation flags.
const (
	fRelaxed uint8 = 1 << iota // a relaxed wait or add
	fCross                     // the scope spans workers
	fBarrier                   // the op is on a barrier
)

// is reports whether op x has flag fl.
func (f *form) is(x int32, fl uint8) bool { return f.flags[x]&fl != 0 }

func satAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return ^uint64(0)
}

func (f *form) threads() int { return len(f.start) - 1 }
