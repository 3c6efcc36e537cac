package verify

import (
	"context"
	"math/bits"
	"sync"
)

// engine runs greedy executions of a form: every enabled operation runs
// until none is. With counters and barriers only, operations never disable
// one another, so one greedy run reaches the unique maximal state (the
// system is confluent), whatever the order.
//
// Freezes restrict a thread to a prefix of its operations (a withhold-run):
// an operation is reachable with thread u frozen before op i exactly when
// the greedy run with that freeze executes it.
//
// In sync mode the engine runs the relaxation S' used to prove
// happens-before: operations that do not synchronize are free (their waits
// always pass, their adds count from the start or at their release fence)
// and every worker is resident. A withheld operation that S' still needs
// before b happens before b in every execution.
type engine struct {
	f        *form
	syncMode bool
	resident bool // every worker resident from the start

	pos   []int32
	limit []int32 // per thread: ops with index < limit may run
	val   []uint64
	heaps [][]waitEntry // per object: blocked waiters keyed by threshold
	spare [][]waitEntry // emptied lists, for reuse
	ready []int32
	// residency: a worker exits once its thread has finished and every
	// dynamic task has ended (dynLeft counts those that have not)
	started, finished int
	dynLeft           int
	capacity          int

	record bool
	trace  []int32 // executed op indices, in order

	// ctx, when set, is checked every few thousand threads run; a run it
	// ends sets cut and leaves the state partial.
	ctx context.Context
	cut bool

	overflow []bool // per counter: went past its width
	// firstAt, when set, records for each op the stamp in force when it
	// first ran (-1 until then).
	firstAt  []int32
	stamp    int32
	credits  [][]credit
	freeInit []uint64

	sm  engineSmall // the lists of a small program, in the engine's own allocation
	mem engineMem   // the lists of a larger program, kept for the next engine (see release)
}

// engineMem holds the lists a released engine leaves to the next one made
// in its memory (see formMem); an engine whose lists take more than
// [maxKeptBytes] in all keeps none.
type engineMem struct {
	ints     []int32
	val      []uint64
	heaps    [][]waitEntry
	overflow []bool
	trace    []int32
}

// engineSmall holds an engine's per-thread, per-object and trace lists
// when the program is small enough: tiny programs are verified by the
// thousand, and each list is otherwise an allocation of its own.
type engineSmall struct {
	ints     [3 * smallThreads]int32
	val      [smallObjects]uint64
	heaps    [smallObjects][]waitEntry
	overflow [smallObjects]bool
	trace    [smallOps]int32
}

// Bounds of the lists an engine keeps in engineSmall.
const (
	smallThreads = 8
	smallObjects = 8
	smallOps     = 32
)

// release hands e back to newEngine, which clears it: nothing may use e,
// or any list it holds (its trace, its positions, its values), after it;
// every result taken from an engine is a copy (form.events, stuck). Until
// it is taken again (or the pool is emptied by a collection), it keeps
// what it refers to alive.
func (e *engine) release() {
	if e == nil {
		return
	}
	if m := &e.mem; 4*cap(m.ints)+8*cap(m.val)+24*cap(m.heaps)+cap(m.overflow)+4*cap(m.trace) > maxKeptBytes {
		*m = engineMem{}
	}
	engines.Put(e)
}

// traceRoom returns an empty trace with room for every op of the form.
func (e *engine) traceRoom() []int32 {
	if n := len(e.f.kind); n <= smallOps {
		return e.sm.trace[:0:n]
	}
	return slabOf(&e.mem.trace, len(e.f.kind))[:0]
}

type waitEntry struct {
	need uint64
	th   int32
}

type credit struct {
	obj int32
	v   uint64
}

// engines holds engines whose analysis is over, for newEngine to take
// again: tiny programs are verified by the thousand, and an engine, with
// its small lists, is a large share of the memory one verification would
// otherwise allocate.
var engines = sync.Pool{New: func() any { return new(engine) }}

// newEngine returns an engine over f at its initial state (after reset).
// An engine whose analysis is over may be handed back with release.
func newEngine(f *form, syncMode bool) *engine {
	n := f.threads()
	e := engines.Get().(*engine)
	mem := e.mem
	*e = engine{f: f, syncMode: syncMode}
	e.mem = mem
	var ints []int32
	if n <= smallThreads {
		ints = e.sm.ints[:3*n]
	} else {
		ints = slabOf(&e.mem.ints, 3*n)
	}
	e.pos, e.limit, e.ready = ints[:n:n], ints[n:2*n:2*n], ints[2*n:2*n:3*n]
	if len(f.init) <= smallObjects {
		e.val = e.sm.val[:len(f.init):len(f.init)]
	} else {
		e.val = slabOf(&e.mem.val, len(f.init))
	}
	if len(f.init) <= smallObjects {
		e.heaps = e.sm.heaps[:len(f.init):len(f.init)]
	} else {
		e.heaps = slabOf(&e.mem.heaps, len(f.init))
	}
	if f.nc <= smallObjects {
		e.overflow = e.sm.overflow[:f.nc:f.nc]
	} else {
		e.overflow = slabOf(&e.mem.overflow, f.nc)
	}
	p := f.p
	e.resident = syncMode || p.Launch.Cooperative || capacity(p.Launch) >= p.Launch.Workers || residencyIgnored()
	e.capacity = capacity(p.Launch)
	if p.Launch.Cooperative {
		e.capacity = f.workers
	}
	if syncMode {
		e.freeInit = append([]uint64(nil), f.init...)
		e.credits = make([][]credit, len(f.kind))
		for x := range f.kind {
			if f.kind[x] != kAdd || f.link[x] == int32(x) {
				continue
			}
			if r := f.link[x]; r >= 0 {
				e.credits[r] = append(e.credits[r], credit{f.obj[x], f.val[x]})
			} else {
				e.freeInit[f.obj[x]] = satAdd(e.freeInit[f.obj[x]], f.val[x])
			}
		}
	}
	return e
}

// reset returns to the initial state with every thread unfrozen.
func (e *engine) reset() {
	f := e.f
	for t := range e.pos {
		e.pos[t] = f.start[t]
		e.limit[t] = f.start[t+1]
	}
	if e.syncMode {
		copy(e.val, e.freeInit)
	} else {
		copy(e.val, f.init)
	}
	for o := range e.heaps {
		e.heaps[o] = e.heaps[o][:0]
	}
	for c := range e.overflow {
		e.overflow[c] = false
	}
	e.ready = e.ready[:0]
	e.trace = e.trace[:0]
	if e.record && cap(e.trace) < len(f.kind) {
		e.trace = e.traceRoom()
	}
	e.started, e.finished = 0, 0
	e.dynLeft = f.threads() - f.workers
	if e.resident {
		e.started = f.workers
	}
	for t := f.threads() - 1; t >= 0; t-- {
		if t >= f.workers || e.resident {
			e.ready = append(e.ready, int32(t))
		}
	}
	if !e.resident {
		e.startWorkers()
	}
}

// startWorkers starts workers in index order while resident slots are free.
func (e *engine) startWorkers() {
	f := e.f
	for e.started < f.workers && e.started-e.exited() < e.capacity {
		w := e.started
		e.started++
		if f.start[w] == f.start[w+1] {
			e.finished++
		} else {
			e.ready = append(e.ready, int32(w))
		}
	}
}

// exited is the number of started workers that have left their slot.
func (e *engine) exited() int {
	if e.dynLeft > 0 {
		return 0
	}
	return e.finished
}

// freeze restricts thread t to ops before index x (absolute).
func (e *engine) freeze(t int, x int32) { e.limit[t] = x }

// thaw lets a frozen thread run to op limit x (absolute) and queues it if
// the freeze was what stopped it.
func (e *engine) thaw(t int, x int32) {
	old := e.limit[t]
	e.limit[t] = x
	if e.pos[t] == old {
		e.ready = append(e.ready, int32(t))
	}
}

// executed reports whether op x has run.
func (e *engine) executed(x int32) bool { return e.pos[e.f.opThread[x]] > x }

// run executes enabled operations until none is left.
func (e *engine) run() {
	for n := 0; len(e.ready) > 0; n++ {
		if e.ctx != nil && n&(1<<12-1) == 0 && e.ctx.Err() != nil {
			e.cut = true
			return
		}
		t := e.ready[len(e.ready)-1]
		e.ready = e.ready[:len(e.ready)-1]
		e.advance(int(t))
	}
}

func (e *engine) advance(t int) {
	f := e.f
	end := f.start[t+1]
	x := e.pos[t]
	if t < f.workers && !e.resident && t >= e.started {
		return
	}
	for x < e.limit[t] && x < end {
		switch f.kind[x] {
		case kWait:
			if e.syncMode && f.link[x] != x {
				break
			}
			o := f.obj[x]
			if e.val[o] < f.val[x] {
				e.pos[t] = x
				e.push(o, waitEntry{f.val[x], int32(t)})
				return
			}
		case kAdd:
			if e.syncMode && f.link[x] != x {
				break
			}
			e.add(f.obj[x], f.val[x])
		case kFence:
			if e.syncMode {
				for _, c := range e.credits[x] {
					e.add(c.obj, c.v)
				}
			}
		}
		if e.record {
			e.trace = append(e.trace, x)
		}
		if e.firstAt != nil && e.firstAt[x] < 0 {
			e.firstAt[x] = e.stamp
		}
		x++
	}
	moved := e.pos[t] != x
	e.pos[t] = x
	if x == end && moved && !e.resident {
		if t < f.workers {
			e.finished++
		} else {
			e.dynLeft--
		}
		e.startWorkers()
	}
}

func (e *engine) add(o int32, v uint64) {
	nv, carry := bits.Add64(e.val[o], v, 0)
	if carry != 0 {
		nv = ^uint64(0)
	}
	e.val[o] = nv
	if int(o) < e.f.nc && (carry != 0 || pastMax(nv, e.f.p.Counters[o].Max())) {
		e.overflow[o] = true
	}
	h := e.heaps[o]
	for len(h) > 0 && h[0].need <= nv {
		e.ready = append(e.ready, h[0].th)
		h = popHeap(h)
	}
	if len(h) == 0 && cap(h) > 0 {
		// Give the emptied list to the next object that needs one.
		e.spare = append(e.spare, h)
		h = nil
	}
	e.heaps[o] = h
}

func (e *engine) push(o int32, w waitEntry) {
	if e.heaps[o] == nil && len(e.spare) > 0 {
		e.heaps[o] = e.spare[len(e.spare)-1]
		e.spare = e.spare[:len(e.spare)-1]
	}
	e.heaps[o] = pushHeap(e.heaps[o], w)
}

// pushHeap adds w to a min-heap of waiters keyed by threshold.
func pushHeap(h []waitEntry, w waitEntry) []waitEntry {
	h = append(h, w)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].need <= h[i].need {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func popHeap(h []waitEntry) []waitEntry {
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].need < h[l].need {
			m = r
		}
		if h[i].need <= h[m].need {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return h
}

// stuck lists the threads that have not finished.
func (e *engine) stuck() []int32 {
	var out []int32
	for t := range e.pos {
		if e.pos[t] < e.f.start[t+1] {
			out = append(out, int32(t))
		}
	}
	return out
}
