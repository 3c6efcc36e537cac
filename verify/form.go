package verify

import (
	"fmt"
	"sync"

	"github.com/megaproof/megaproof/internal/faults"
	"github.com/megaproof/megaproof/schedule"
)

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
	checks    int      // guard pre-checks (fCheck ops) in the form

	sm  formSmall // the lists of a small program, in the form's own allocation
	mem formMem   // the slabs of a larger program, kept for the next form (see release)
}

// formMem holds the slabs a released form leaves to the next one lowered
// in its memory: programs of a batch are of about the same size, so the
// next form takes them instead of allocating. A form whose slabs take
// more than [maxKeptBytes] in all keeps none.
type formMem struct {
	slab  []int32
	ints  []int32
	bytes []uint8
	words []uint64
}

// maxKeptBytes bounds the bytes of lists a released form or engine keeps
// (1 MiB).
const maxKeptBytes = 1 << 20

// slabOf returns n zeroed elements of *keep, reallocating it when it is too
// small.
func slabOf[T any](keep *[]T, n int) []T {
	if cap(*keep) < n {
		*keep = make([]T, n)
		return *keep
	}
	s := (*keep)[:n]
	clear(s)
	return s
}

// formSmall holds a form's slabs when the program is small enough: tiny
// programs are verified by the thousand, and each slab is otherwise an
// allocation of its own.
type formSmall struct {
	slab  [64]int32
	ints  [3 * smallOps]int32
	bytes [2 * smallOps]uint8
	words [smallOps + 4*smallObjects]uint64
}

// countOps sets count[i] to the ops of task i, for i in [lo, hi): its body,
// its steps (a sync is two), its guard checks. (A function of its own: a
// closure would be kept on the heap by the goroutine of large programs.)
func countOps(p *schedule.Program, count []int32, lo, hi int) {
	for i := lo; i < hi; i++ {
		t := &p.Tasks[i]
		n := int32(1 + len(t.Before) + len(t.After) + guardChecks(t))
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
		count[i] = n
	}
}

// forms holds forms whose analysis is over, for lowerForm to take again
// (see engines).
var forms = sync.Pool{New: func() any { return new(form) }}

// release hands f back to lowerForm, which clears it. Nothing may use f,
// or any list it holds, after it, and no engine over it may run again.
func (f *form) release() {
	if f == nil {
		return
	}
	if m := &f.mem; 4*cap(m.slab)+4*cap(m.ints)+cap(m.bytes)+8*cap(m.words) > maxKeptBytes {
		*m = formMem{}
	}
	forms.Put(f)
}

func lowerForm(p *schedule.Program) *form {
	nc, nb := len(p.Counters), len(p.Barriers)
	f := forms.Get().(*form)
	mem := f.mem
	*f = form{p: p, workers: p.Launch.Workers, nc: nc, nb: nb}
	f.mem = mem
	// Pass 1, in task order: each task's thread and the ops per thread.
	nT := len(p.Tasks)
	nth := f.workers
	for i := range p.Tasks {
		if p.Tasks[i].Worker == schedule.Dynamic {
			nth++
		}
	}
	// The per-task and per-thread lists share one slab, and so do the
	// per-op lists once their size is known: small programs are lowered
	// with a handful of allocations.
	var slab []int32
	if n := 3*nT + 2*nth + 1; n <= len(f.sm.slab) {
		slab = f.sm.slab[:n]
	} else {
		slab = slabOf(&f.mem.slab, n)
	}
	carve := func(n int) []int32 {
		c := slab[:n:n]
		slab = slab[n:]
		return c
	}
	f.taskTh = carve(nT)
	f.body = carve(nT)
	count := carve(nT) // ops of each task
	f.start = carve(nth + 1)
	cursor := carve(nth)
	next := f.workers
	for i := range p.Tasks {
		if w := p.Tasks[i].Worker; w == schedule.Dynamic {
			f.taskTh[i] = int32(next)
			next++
		} else {
			f.taskTh[i] = w
		}
	}
	if parallelLowering && len(p.Tasks) >= 1<<16 {
		var wg sync.WaitGroup
		half := len(p.Tasks) / 2
		wg.Go(func() { countOps(p, count, 0, half) })
		countOps(p, count, half, len(p.Tasks))
		wg.Wait()
	} else {
		countOps(p, count, 0, len(p.Tasks))
	}
	for i, n := range count {
		f.start[f.taskTh[i]+1] += n
		f.checks += guardChecks(&p.Tasks[i])
	}
	for t := 1; t <= nth; t++ {
		f.start[t] += f.start[t-1]
	}
	nops := int(f.start[nth])
	var bytes []uint8
	var ints []int32
	var words []uint64
	if nops <= smallOps && nc+nb <= 2*smallObjects {
		bytes, ints, words = f.sm.bytes[:2*nops:2*nops], f.sm.ints[:3*nops:3*nops], f.sm.words[:nops+2*(nc+nb):nops+2*(nc+nb)]
	} else {
		bytes, ints, words = slabOf(&f.mem.bytes, 2*nops), slabOf(&f.mem.ints, 3*nops), slabOf(&f.mem.words, nops+2*(nc+nb))
	}
	f.kind, f.flags = bytes[:nops:nops], bytes[nops:]
	f.obj, f.task, f.opThread = ints[:nops:nops], ints[nops:2*nops:2*nops], ints[2*nops:]
	f.val, f.init, f.total = words[:nops:nops], words[nops:nops+nc+nb:nops+nc+nb], words[nops+nc+nb:]
	for i, c := range p.Counters {
		f.init[i] = c.Init
	}
	// Each task's first op: a worker's queue is its tasks in list order.
	first := count // reused in place
	copy(cursor, f.start[:nth])
	for i, n := range count {
		th := f.taskTh[i]
		first[i] = cursor[th]
		cursor[th] += n
	}
	// Pass 2 writes every task's ops at its own offset, so halves of the
	// task list can be lowered concurrently. Barrier generations depend on
	// the order of a thread's tasks; programs with barriers go in one piece.
	if parallelLowering && nb == 0 && len(p.Tasks) >= 1<<16 {
		var wg sync.WaitGroup
		sem := [2]bool{}
		half := len(p.Tasks) / 2
		for k, r := range [2][2]int{{0, half}, {half, len(p.Tasks)}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem[k] = f.lowerTasks(r[0], r[1], first, nil)
			}()
		}
		wg.Wait()
		f.semaphore = sem[0] || sem[1]
	} else {
		f.semaphore = f.lowerTasks(0, len(p.Tasks), first, map[[2]int32]uint64{})
	}
	// What every object's adds sum to, for unsatisfiable waits.
	copy(f.total, f.init)
	for x, k := range f.kind {
		if k == kAdd {
			f.total[f.obj[x]] = satAdd(f.total[f.obj[x]], f.val[x])
		}
	}
	return f
}

// check verifies the form's internal invariants: thread ranges are a
// partition of the ops in order, every op names its thread and a valid
// task, objects are in range, every body is where its task says, and
// release/acquire points (when computed) stay in the op's own thread.
func (f *form) check() error {
	n := int32(len(f.kind))
	if len(f.start) == 0 || f.start[0] != 0 || f.start[len(f.start)-1] != n {
		return fmt.Errorf("verify: sanity: thread ranges do not cover the %d ops", n)
	}
	for t := 0; t < f.threads(); t++ {
		if f.start[t] > f.start[t+1] {
			return fmt.Errorf("verify: sanity: thread %d has a negative range", t)
		}
		for x := f.start[t]; x < f.start[t+1]; x++ {
			if f.opThread[x] != int32(t) {
				return fmt.Errorf("verify: sanity: op %d is in thread %d's range but names thread %d", x, t, f.opThread[x])
			}
			tk := f.task[x]
			if tk < 0 || int(tk) >= len(f.p.Tasks) || f.taskTh[tk] != int32(t) {
				return fmt.Errorf("verify: sanity: op %d names task %d of another thread", x, tk)
			}
			switch f.kind[x] {
			case kWait, kAdd:
				if f.obj[x] < 0 || int(f.obj[x]) >= len(f.init) {
					return fmt.Errorf("verify: sanity: op %d names object %d of %d", x, f.obj[x], len(f.init))
				}
			case kBody:
				if f.body[tk] != x {
					return fmt.Errorf("verify: sanity: task %d's body is op %d, not %d", tk, f.body[tk], x)
				}
			}
			if f.link != nil && f.link[x] >= 0 && (f.link[x] < f.start[t] || f.link[x] >= f.start[t+1]) {
				return fmt.Errorf("verify: sanity: op %d links to op %d outside its thread", x, f.link[x])
			}
		}
	}
	return nil
}

// linkPoints computes every add's release point and every wait's acquire
// point, and whether every edge synchronizes. Only the ordering analyses
// need them.
func (f *form) linkPoints() {
	p := f.p
	f.link = make([]int32, len(f.kind))
	f.syncing = p.Launch.Cooperative || capacity(p.Launch) >= p.Launch.Workers || residencyIgnored()
	for t := 0; t < f.threads(); t++ {
		lastFence := int32(-1)
		for x := f.start[t]; x < f.start[t+1]; x++ {
			f.link[x] = -1
			switch f.kind[x] {
			case kFence:
				if f.is(x, fCross) && !faults.On(faults.FencesIgnored) {
					lastFence = x
				}
			case kAdd:
				if f.is(x, fCross) {
					if !f.is(x, fRelaxed) {
						f.link[x] = x
					} else {
						f.link[x] = releasePoint(x, lastFence)
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
				if f.is(x, fCross) && !faults.On(faults.FencesIgnored) {
					nextFence = x
				}
			case kWait:
				if f.is(x, fCross) {
					if !f.is(x, fRelaxed) {
						f.link[x] = x
					} else {
						f.link[x] = acquirePoint(x, nextFence)
					}
				}
				// A pre-check orders nothing the real wait after it does
				// not order with synchronization.
				if f.link[x] != x && !f.is(x, fCheck) {
					f.syncing = false
				}
			}
		}
	}
}

// parallelLowering lets large programs without barriers be lowered by two
// goroutines; tests compare both ways.
var parallelLowering = true

// lowerTasks writes the ops of tasks [lo, hi), task i's from first[i] on,
// and reports whether any uses a semaphore. gen counts each thread's
// operations per barrier; it may be nil only when there are no barriers.
func (f *form) lowerTasks(lo, hi int, first []int32, gen map[[2]int32]uint64) bool {
	p := f.p
	semaphore := false
	for i := lo; i < hi; i++ {
		tk := &p.Tasks[i]
		th := f.taskTh[i]
		x := first[i]
		for _, s := range tk.Before[:guardChecks(tk)] {
			// A dynamic task is claimed once its whole guard holds
			// (docs/SEMANTICS.md, "Dispatch"): pre-checks that
			// synchronize nothing gate its real waits.
			f.emit(x, kWait, s.Object, s.Value, fCheck, int32(i), th)
			x++
		}
		for _, s := range tk.Before {
			x = f.lowerStep(x, int32(i), th, s, gen, &semaphore)
		}
		f.body[i] = x
		f.emit(x, kBody, 0, 0, fCross, int32(i), th)
		x++
		for _, s := range tk.After {
			x = f.lowerStep(x, int32(i), th, s, gen, &semaphore)
		}
	}
	return semaphore
}

// emit writes op x.
func (f *form) emit(x int32, k uint8, obj int32, v uint64, fl uint8, task, th int32) {
	f.kind[x], f.obj[x], f.val[x], f.task[x] = k, obj, v, task
	f.flags[x], f.opThread[x] = fl, th
}

// lowerStep writes the ops of step s of a task from op x on and returns
// the next op.
func (f *form) lowerStep(x, task, th int32, s schedule.Step, gen map[[2]int32]uint64, semaphore *bool) int32 {
	var fl uint8
	if s.Relaxed && !faultStrengthens(s.Kind) {
		fl |= fRelaxed
	}
	if s.Scope.CrossWorker() || faultWidens(s.Kind) {
		fl |= fCross
	}
	switch s.Kind {
	case schedule.Wait:
		f.emit(x, kWait, s.Object, s.Value, fl, task, th)
	case schedule.Signal:
		f.emit(x, kAdd, s.Object, s.Value, fl, task, th)
	case schedule.Sync, schedule.Arrive:
		key := [2]int32{th, s.Object}
		gen[key]++
		nc := int32(f.nc)
		f.emit(x, kAdd, nc+s.Object, 1, fCross|fBarrier, task, th)
		if s.Kind == schedule.Sync {
			x++
			f.emit(x, kWait, nc+s.Object, barrierTarget(gen[key], uint64(f.p.Barriers[s.Object].Parties)), fCross|fBarrier, task, th)
		}
	case schedule.Acquire:
		*semaphore = true
		f.emit(x, kAcquire, s.Object, s.Value, fl&fCross, task, th)
	case schedule.Release:
		*semaphore = true
		f.emit(x, kRelease, s.Object, s.Value, fl&fCross, task, th)
	case schedule.Fence:
		f.emit(x, kFence, 0, 0, fl&fCross, task, th)
	default:
		return x
	}
	return x + 1
}

// Operation flags.
const (
	fRelaxed uint8 = 1 << iota // a relaxed wait or add
	fCross                     // the scope spans workers
	fBarrier                   // the op is on a barrier
	fCheck                     // a guard pre-check: a wait that synchronizes nothing and is no step of the schedule
)

// guardChecks is the number of pre-checks a task's thread starts with: a
// dynamic task whose guard is two or more counter waits is claimed only
// once all of them hold, so each is checked (without synchronizing) before
// the real waits run. A guard of one wait needs none, and a guard with an
// acquire belongs to a semaphore program, which the explorer decides.
func guardChecks(t *schedule.Task) int {
	if t.Worker != schedule.Dynamic {
		return 0
	}
	g := 0
	for g < len(t.Before) && t.Before[g].Kind == schedule.Wait {
		g++
	}
	if g < 2 || g < len(t.Before) && t.Before[g].Kind == schedule.Acquire {
		return 0
	}
	return g
}

// is reports whether op x has flag fl.
func (f *form) is(x int32, fl uint8) bool { return f.flags[x]&fl != 0 }

func satAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return ^uint64(0)
}

func (f *form) threads() int { return len(f.start) - 1 }
