package defcheck

import (
	"cmp"
	"iter"
	"math"
	"slices"

	"github.com/megaproof/megaproof/internal/geom"
	"github.com/megaproof/megaproof/schedule"
)

// CodesAtScale is [CodesBudget] by means that scale to programs of
// hundreds of thousands of operations. It answers the same questions by
// the same definitions, and differs only in how it finds and answers
// them:
//
//   - Runs wake the threads blocked on an object when an operation
//     changes it, rather than passing over every thread until none moves.
//     The final state of a maximal run is the same: the system is
//     persistent.
//   - The withhold-runs of one thread t, frozen before each of its steps
//     in turn, are one run: the maximal run frozen at step k+1 continues
//     the one frozen at k (everything the latter executed stays enabled,
//     and only t's step k is new). Recording at which freeze each task's
//     Begin first runs answers every must-precede question about t, and
//     every single-source reachability question, from that record.
//   - Task pairs are those whose accesses' byte extents meet in one arena
//     with one of them a write, found by sorting and sweeping the accesses
//     of each arena; each is then decided as by [CodesBudget], in the same
//     order (ascending pairs).
//   - An uninitialized-read question looks only at the writers whose
//     writes overlap the read. In a synchronizing program (see
//     synchronizing), a set of writers one of which the reader cannot
//     begin without is not clean: withholding more threads, or earlier,
//     only ever stops more operations (every enabling condition is
//     monotone in the state), so no withhold-run of the whole set lets the
//     reader begin either.
//
// Its work (the operations executed and the pairs examined) is bounded by
// the threads times the operations plus the candidate pairs, rather than
// by the tasks squared; like [CodesBudget]'s, it depends only on the
// program.
func CodesAtScale(p *schedule.Program, maxWork int64) ([]string, error) {
	return codes(&checker{p: p, f: schedule.Lower(p), maxWork: maxWork, scaled: true, need: map[int][]int32{}})
}

// runner runs a state to its fixpoint, waking blocked threads by object.
type runner struct {
	c        *checker
	s        *state
	frozen   []int // per thread, the step before which it stops (-1: none); nil: none frozen
	capacity int
	blocked  [][]int32 // per object (counters, then barriers): threads blocked on it
	least    []uint64  // per object: the least value one of them needs
	queued   []bool
	queue    []int32
	onBegin  func(task int)
}

func (c *checker) newRunner(s *state, frozen []int, capacity int, onBegin func(task int)) *runner {
	return &runner{c: c, s: s, frozen: frozen, capacity: capacity, onBegin: onBegin,
		blocked: make([][]int32, len(c.p.Counters)+len(c.p.Barriers)), least: make([]uint64, len(c.p.Counters)+len(c.p.Barriers)),
		queued: make([]bool, len(c.f.Threads))}
}

func (r *runner) push(t int) {
	if !r.queued[t] {
		r.queued[t] = true
		r.queue = append(r.queue, int32(t))
	}
}

// wake queues the threads blocked on obj once its value reaches the
// least value one of them needs (a barrier's arrivals wake its waiters
// once, at the last arrival of the generation, not at every one).
func (r *runner) wake(obj int, value uint64) {
	if len(r.blocked[obj]) == 0 || value < r.least[obj] {
		return
	}
	for _, t := range r.blocked[obj] {
		r.push(int(t))
	}
	r.blocked[obj] = r.blocked[obj][:0]
}

// all tries every thread, then runs to the fixpoint.
func (r *runner) all() {
	for t := range r.c.f.Threads {
		r.push(t)
	}
	r.drain()
}

// drain runs the queued threads, and those their operations wake, until
// none can move.
func (r *runner) drain() {
	c, s := r.c, r.s
	nc := len(c.p.Counters)
	for len(r.queue) > 0 && !c.over() {
		t := int(r.queue[len(r.queue)-1])
		r.queue = r.queue[:len(r.queue)-1]
		r.queued[t] = false
		ops := c.f.Threads[t].Ops
		for (r.frozen == nil || r.frozen[t] < 0 || s.pos[t] < r.frozen[t]) && c.enabled(s, t) {
			op := ops[s.pos[t]]
			started := s.started
			if op.Kind == schedule.OpBegin && r.onBegin != nil {
				r.onBegin(int(op.Task))
			}
			c.exec(s, t, r.capacity)
			switch op.Kind {
			case schedule.OpSignal:
				r.wake(int(op.Object), s.val[op.Object])
			case schedule.OpArrive:
				r.wake(nc+int(op.Object), s.arr[op.Object])
			}
			for w := started; w < s.started; w++ {
				r.push(w)
			}
			if c.over() {
				return
			}
		}
		if obj, need := r.blockedOn(t); obj >= 0 {
			if len(r.blocked[obj]) == 0 || need < r.least[obj] {
				r.least[obj] = need
			}
			r.blocked[obj] = append(r.blocked[obj], int32(t))
		}
	}
}

// blockedOn is the object whose change may enable thread t and the value
// it needs there, or -1 when none can (finished, frozen, or a worker not
// started: started workers are queued).
func (r *runner) blockedOn(t int) (int, uint64) {
	c, s := r.c, r.s
	ops := c.f.Threads[t].Ops
	if s.pos[t] >= len(ops) || (t < c.f.Workers && t >= s.started) || (r.frozen != nil && r.frozen[t] >= 0 && s.pos[t] >= r.frozen[t]) {
		return -1, 0
	}
	if t >= c.f.Workers && s.pos[t] == 0 && !c.unbounded {
		for _, op := range ops[:c.guard[t]] {
			if s.val[op.Object] < op.Value {
				return int(op.Object), op.Value
			}
		}
	}
	switch op := ops[s.pos[t]]; op.Kind {
	case schedule.OpWait:
		if s.val[op.Object] < op.Value {
			return int(op.Object), op.Value
		}
	case schedule.OpAwait:
		if s.arr[op.Object] < op.Value {
			return len(c.p.Counters) + int(op.Object), op.Value
		}
	}
	return -1, 0
}

// needOf returns, per task, the first step k such that the task's Begin
// runs in the maximal run with thread t frozen before step k
// (math.MaxInt32 when there is none): the withhold-runs of t frozen at
// 0, 1, 2, ... as one run.
func (c *checker) needOf(t int) []int32 {
	if nd, ok := c.need[t]; ok {
		return nd
	}
	nd := make([]int32, len(c.p.Tasks))
	for i := range nd {
		nd[i] = math.MaxInt32
	}
	frozen := make([]int, len(c.f.Threads))
	for i := range frozen {
		frozen[i] = -1
	}
	frozen[t] = 0
	step := int32(0)
	s := c.initial()
	r := c.newRunner(s, frozen, c.capacity(), func(task int) { nd[task] = min(nd[task], step) })
	r.all()
	for k := 0; k < len(c.f.Threads[t].Ops) && s.pos[t] == k && !c.over(); k++ {
		step = int32(k + 1)
		frozen[t] = k + 1
		r.push(t)
		r.drain()
	}
	c.need[t] = nd
	return nd
}

// candidatePairs returns the task pairs a < b (as a<<32 | b, ascending)
// with an access of each whose byte extents meet in one arena, one of the
// two a write: a superset of the conflicting pairs.
func (c *checker) candidatePairs() []uint64 {
	p := c.p
	type ext struct {
		lo, hi int64
		task   int32
		write  bool
	}
	byArena := map[int64][]ext{}
	for i, t := range p.Tasks {
		for k, list := range [][]schedule.Access{t.Writes, t.Reads} {
			for _, a := range list {
				if a.Length == 0 {
					continue
				}
				key, r := arenaRectOf(p, a)
				byArena[key] = append(byArena[key], ext{r.Off, r.End(), int32(i), k == 0})
			}
		}
	}
	var pairs []uint64
	add := func(x, y int32) {
		if x != y {
			pairs = append(pairs, uint64(min(x, y))<<32|uint64(max(x, y)))
		}
	}
	for _, es := range byArena {
		slices.SortFunc(es, func(x, y ext) int {
			if x.lo != y.lo {
				return cmp.Compare(x.lo, y.lo)
			}
			return cmp.Compare(x.hi, y.hi)
		})
		var ws, rs []ext // active writes and reads
		for _, x := range es {
			ws = slices.DeleteFunc(ws, func(y ext) bool { return y.hi <= x.lo })
			for _, y := range ws {
				add(x.task, y.task)
			}
			if x.write {
				rs = slices.DeleteFunc(rs, func(y ext) bool { return y.hi <= x.lo })
				for _, y := range rs {
					add(x.task, y.task)
				}
				ws = append(ws, x)
			} else {
				rs = append(rs, x)
			}
		}
	}
	slices.Sort(pairs)
	return slices.Compact(pairs)
}

// arenaRectOf is an access's arena (a buffer without arena is its own,
// keyed -1-buffer) and its rectangle there.
func arenaRectOf(p *schedule.Program, a schedule.Access) (int64, geom.Rect) {
	b := p.Buffers[a.Buffer]
	key, off := -1-int64(a.Buffer), uint64(0)
	if b.Arena != schedule.NoArena {
		key, off = int64(b.Arena), b.Offset
	}
	return key, geom.Strided(geom.Pos(off, a.Offset), a.Length, a.Rows, a.Stride)
}

// writersOf yields, ascending, the tasks with a write to rd's buffer that
// overlaps rd.
func (c *checker) writersOf(rd schedule.Access) iter.Seq[int] {
	if c.writes == nil {
		c.writes = make([][]int32, len(c.p.Buffers))
		for i, t := range c.p.Tasks {
			for _, w := range t.Writes {
				if ws := c.writes[w.Buffer]; len(ws) == 0 || ws[len(ws)-1] != int32(i) {
					c.writes[w.Buffer] = append(ws, int32(i))
				}
			}
		}
	}
	r := bufferRect(rd)
	return func(yield func(int) bool) {
		for _, w := range c.writes[rd.Buffer] {
			meets := false
			for _, wr := range c.p.Tasks[w].Writes {
				if wr.Buffer == rd.Buffer && wr.Length > 0 && geom.Overlap(bufferRect(wr), r) {
					meets = true
					break
				}
			}
			if meets && !yield(int(w)) {
				return
			}
		}
	}
}

// someMustPrecede reports, in a synchronizing program, whether target
// cannot begin with one of the sources alone withheld; then it cannot
// begin with all of them withheld either.
func (c *checker) someMustPrecede(sources []int, target int, thread, begin []int) bool {
	if !c.synchronizing() {
		return false
	}
	for _, s := range sources {
		if !c.reachableWithout([]int{s}, target, thread, begin) {
			return true
		}
	}
	return false
}
