// Package defcheck is the slow definitional checker that tests hold the
// verifier to. It shares no code with package verify: it works on
// schedule.Lower's normal form, runs one naive withhold-run per question
// (no clocks, no heaps, no sweeps), and decides happens-before by trying
// every order in which tainted releases may reach their objects.
//
// It decides programs without semaphores, at sizes where one run per
// conflicting pair is affordable (hundreds of tasks).
package defcheck

import (
	"errors"
	"fmt"
	"slices"

	"github.com/megaproof/megaproof/internal/geom"
	"github.com/megaproof/megaproof/schedule"
)

// ErrSemaphores is returned for programs with semaphores.
var ErrSemaphores = errors.New("defcheck: programs with semaphores are out of scope")

// ErrBudget is returned when a happens-before question needed more
// branches than the budget allows, or a coverage question more pieces.
var ErrBudget = errors.New("defcheck: branch budget exhausted")

// Families returns the sorted set of finding families (the part of each
// code before the dot) of a valid program.
func Families(p *schedule.Program) ([]string, error) {
	c := &checker{p: p, f: schedule.Lower(p)}
	for _, th := range c.f.Threads {
		for _, op := range th.Ops {
			if op.Kind == schedule.OpAcquire || op.Kind == schedule.OpRelease {
				return nil, ErrSemaphores
			}
		}
	}
	fam := map[string]bool{}
	if err := c.check(fam); err != nil {
		return nil, err
	}
	var out []string
	for k := range fam {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}

type checker struct {
	p     *schedule.Program
	f     *schedule.Form
	runs  map[[2]int][]int // (thread, frozen step) -> positions of its maximal run
	multi map[string][]int // several threads frozen -> positions
	sync  uint8            // 0 unknown, 1 synchronizing, 2 not
}

// shareArena reports whether one task writes an arena the other writes or
// reads.
func shareArena(a, b [2][]int32) bool {
	for _, w := range a[0] {
		if slices.Contains(b[0], w) || slices.Contains(b[1], w) {
			return true
		}
	}
	for _, w := range b[0] {
		if slices.Contains(a[1], w) {
			return true
		}
	}
	return false
}

// state is a naive execution state.
type state struct {
	pos      []int
	val      []uint64 // counters
	arr      []uint64 // barrier arrivals
	started  int
	finished int
	wrapped  bool // some counter went past 2^64-1
}

func (c *checker) initial() *state {
	s := &state{pos: make([]int, len(c.f.Threads)), val: make([]uint64, len(c.p.Counters)), arr: make([]uint64, len(c.p.Barriers))}
	for i, k := range c.p.Counters {
		s.val[i] = k.Init
	}
	c.startWorkers(s, c.capacity())
	return s
}

func (c *checker) capacity() int {
	if c.p.Launch.Cooperative {
		return c.f.Workers
	}
	return c.p.Launch.Capacity()
}

func (c *checker) startWorkers(s *state, capacity int) {
	for s.started < c.f.Workers && s.started-s.finished < capacity {
		if len(c.f.Threads[s.started].Ops) == 0 {
			s.finished++
		}
		s.started++
	}
}

func (c *checker) enabled(s *state, t int) bool {
	th := c.f.Threads[t]
	if s.pos[t] >= len(th.Ops) || (t < c.f.Workers && t >= s.started) {
		return false
	}
	op := th.Ops[s.pos[t]]
	switch op.Kind {
	case schedule.OpWait:
		return s.val[op.Object] >= op.Value
	case schedule.OpAwait:
		return s.arr[op.Object] >= op.Value
	}
	return true
}

func (c *checker) exec(s *state, t int, capacity int) {
	op := c.f.Threads[t].Ops[s.pos[t]]
	switch op.Kind {
	case schedule.OpSignal:
		s.val[op.Object] += op.Value
		if s.val[op.Object] < op.Value {
			s.val[op.Object] = ^uint64(0)
			s.wrapped = true
		}
	case schedule.OpArrive:
		s.arr[op.Object]++
	}
	s.pos[t]++
	if t < c.f.Workers && s.pos[t] == len(c.f.Threads[t].Ops) {
		s.finished++
		c.startWorkers(s, capacity)
	}
}

// fixpoint runs every enabled step of unfrozen threads (frozen[t] = step
// before which thread t stops; -1 means not frozen) until none is left.
func (c *checker) fixpoint(s *state, frozen []int, capacity int) {
	for moved := true; moved; {
		moved = false
		for t := range c.f.Threads {
			for c.enabled(s, t) && (frozen == nil || frozen[t] < 0 || s.pos[t] < frozen[t]) {
				c.exec(s, t, capacity)
				moved = true
			}
		}
	}
}

func (c *checker) done(s *state, t, step int) bool { return s.pos[t] > step }

func (c *checker) unfinished(s *state) bool {
	for t, th := range c.f.Threads {
		if s.pos[t] < len(th.Ops) {
			return true
		}
	}
	return false
}

// body locates each task's Begin step.
func (c *checker) bodies() (thread, begin []int) {
	thread = make([]int, len(c.p.Tasks))
	begin = make([]int, len(c.p.Tasks))
	for t, th := range c.f.Threads {
		for i, op := range th.Ops {
			if op.Kind == schedule.OpBegin {
				thread[op.Task], begin[op.Task] = t, i
			}
		}
	}
	return thread, begin
}

func (c *checker) check(fam map[string]bool) error {
	p := c.p
	// Static families.
	l := p.Launch
	if l.Cooperative && l.Workers > l.Capacity() {
		fam["occupancy"] = true
	}
	for _, t := range p.Tasks {
		for _, a := range append(append([]schedule.Access(nil), t.Reads...), t.Writes...) {
			// Rows only grow: the first and last bytes are the extremes.
			r := bufferRect(a)
			lo, hi := geom.Byte(0, r.Off), geom.Byte(0, r.End())
			if lo < 0 || hi < 0 || uint64(hi) > p.Buffers[a.Buffer].Size {
				fam["out-of-bounds"] = true
			}
		}
		for _, a := range t.Writes {
			if p.Buffers[a.Buffer].Kind.ReadOnly() {
				fam["readonly-write"] = true
			}
		}
	}
	for bi, b := range p.Buffers {
		if b.Kind != schedule.KindOutput {
			continue
		}
		var writes []geom.Rect
		for _, t := range p.Tasks {
			for _, a := range t.Writes {
				if int(a.Buffer) == bi {
					writes = append(writes, bufferRect(a))
				}
			}
		}
		_, found, ok := geom.Uncovered([]geom.Rect{geom.Strided(geom.Pos(0, 0), b.Size, 1, 0)}, writes, geomBudget)
		if !ok {
			return ErrBudget
		}
		if found {
			fam["output-unwritten"] = true
		}
	}
	// Progress.
	s := c.initial()
	c.fixpoint(s, nil, c.capacity())
	for ci, k := range p.Counters {
		if s.val[ci] > k.Max() || s.wrapped {
			fam["counter-overflow"] = true
		}
	}
	if c.unfinished(s) {
		all := c.initial()
		c.startWorkers(all, c.f.Workers)
		c.fixpoint(all, nil, c.f.Workers)
		if c.unfinished(all) {
			fam["deadlock"] = true
		} else {
			fam["occupancy"] = true
		}
	}
	// Races and uninitialized reads over bodies that run.
	thread, begin := c.bodies()
	ran := func(task int) bool { return c.done(s, thread[task], begin[task]) }
	// The arenas each task writes and reads: a cheap filter before the
	// byte-exact conflict test.
	touch := make([][2][]int32, len(p.Tasks))
	for i, t := range p.Tasks {
		for k, list := range [][]schedule.Access{t.Writes, t.Reads} {
			for _, a := range list {
				arena, _, _ := schedule.ArenaSpan(p, a.Buffer, 0, 0)
				touch[i][k] = append(touch[i][k], arena)
			}
		}
	}
	for a := range p.Tasks {
		for b := a + 1; b < len(p.Tasks); b++ {
			if !ran(a) || !ran(b) || thread[a] == thread[b] || !shareArena(touch[a], touch[b]) || !schedule.Conflict(p, a, b) {
				continue
			}
			ab := c.mustPrecede(a, b, thread, begin)
			ba := c.mustPrecede(b, a, thread, begin)
			if !ab && !ba {
				fam["race"] = true
				continue
			}
			first, second := a, b
			if ba {
				first, second = b, a
			}
			clean, err := c.canBeClean([]int{first}, second, thread, begin)
			if err != nil {
				return err
			}
			if clean {
				fam["race"] = true
			}
		}
	}
	for r := range p.Tasks {
		if !ran(r) {
			continue
		}
		un, err := c.uninitialized(r, thread, begin)
		if err != nil {
			return err
		}
		if un {
			fam["uninitialized-read"] = true
		}
	}
	return nil
}

// synchronizing reports whether every signal releases and every wait
// acquires at a scope spanning workers, and every worker is resident. Then
// happens-before is exactly must-precede: in any execution, the steps that
// no source happens before, kept in execution order, are themselves an
// execution without the sources (each of their program predecessors is
// among them, and every add a wait among them observed synchronized with it,
// so it is among them too). So a target can begin with no source happening
// before it exactly when it can begin with every source withheld.
func (c *checker) synchronizing() bool {
	if c.sync == 0 {
		c.sync = 2
		if c.computeSynchronizing() {
			c.sync = 1
		}
	}
	return c.sync == 1
}

func (c *checker) computeSynchronizing() bool {
	l := c.p.Launch
	if !l.Cooperative && l.Capacity() < l.Workers {
		return false
	}
	for _, th := range c.f.Threads {
		for _, op := range th.Ops {
			if (op.Kind == schedule.OpWait || op.Kind == schedule.OpSignal) && (op.Relaxed || !op.Scope.CrossWorker()) {
				return false
			}
		}
	}
	return true
}

// reachableWithout reports whether target's body can begin with every
// source's body withheld (its thread frozen before its Begin).
func (c *checker) reachableWithout(sources []int, target int, thread, begin []int) bool {
	if len(sources) == 1 {
		return c.frozenRun(thread[sources[0]], begin[sources[0]])[thread[target]] > begin[target]
	}
	frozen := make([]int, len(c.f.Threads))
	for i := range frozen {
		frozen[i] = -1
	}
	for _, src := range sources {
		if frozen[thread[src]] < 0 || begin[src] < frozen[thread[src]] {
			frozen[thread[src]] = begin[src]
		}
	}
	key := fmt.Sprint(frozen)
	pos, ok := c.multi[key]
	if !ok {
		s := c.initial()
		c.fixpoint(s, frozen, c.capacity())
		pos = s.pos
		if c.multi == nil {
			c.multi = map[string][]int{}
		}
		c.multi[key] = pos
	}
	return pos[thread[target]] > begin[target]
}

// mustPrecede reports whether task a's body must end before task b's body
// begins in every execution: b cannot begin with a's thread frozen before
// a's End.
func (c *checker) mustPrecede(a, b int, thread, begin []int) bool {
	pos := c.frozenRun(thread[a], begin[a]+1) // Begin may run, End may not
	return pos[thread[b]] <= begin[b]
}

// frozenRun returns the thread positions of the maximal run with thread t
// stopped before step at. Runs are remembered: many questions share one.
func (c *checker) frozenRun(t, at int) []int {
	key := [2]int{t, at}
	if pos, ok := c.runs[key]; ok {
		return pos
	}
	s := c.initial()
	frozen := make([]int, len(c.f.Threads))
	for i := range frozen {
		frozen[i] = -1
	}
	frozen[t] = at
	c.fixpoint(s, frozen, c.capacity())
	if c.runs == nil {
		c.runs = map[[2]int][]int{}
	}
	c.runs[key] = s.pos
	return s.pos
}

// uninitialized reports whether some byte that task r reads from a scratch
// or output buffer can be read with no same-buffer writer of it ordered
// before r.
func (c *checker) uninitialized(r int, thread, begin []int) (bool, error) {
	p := c.p
	for _, rd := range p.Tasks[r].Reads {
		k := p.Buffers[rd.Buffer].Kind
		if k != schedule.KindScratch && k != schedule.KindOutput {
			continue
		}
		// Writers of the same buffer, and the regions of the read where the
		// set of writers covering a byte is constant (internal/geom, exact
		// and independent of rows): one question per distinct set decides
		// them all.
		var writers []int
		var groups [][]geom.Rect
		for w := range p.Tasks {
			if w == r {
				continue
			}
			var rs []geom.Rect
			for _, wr := range p.Tasks[w].Writes {
				if wr.Buffer == rd.Buffer {
					rs = append(rs, bufferRect(wr))
				}
			}
			if len(rs) > 0 {
				writers = append(writers, w)
				groups = append(groups, rs)
			}
		}
		var clean bool
		var err error
		ok := geom.Partition([]geom.Rect{bufferRect(rd)}, groups, geomBudget, func(set []int32, _ geom.Span) bool {
			srcs := make([]int, len(set))
			for i, g := range set {
				srcs[i] = writers[g]
			}
			clean, err = c.canBeClean(srcs, r, thread, begin)
			return err == nil && !clean
		})
		if !ok {
			return false, ErrBudget
		}
		if err != nil || clean {
			return clean, err
		}
	}
	return false, nil
}

// canBeClean reports whether some execution begins task target's body with
// no source body happening before it. It tries every order in which
// objects can be poisoned (receive a release whose release point follows a
// source), running everything else eagerly in between.
func (c *checker) canBeClean(sources []int, target int, thread, begin []int) (bool, error) {
	if c.synchronizing() {
		return c.reachableWithout(sources, target, thread, begin), nil
	}
	budget := 4096
	g := &taintState{state: c.initial(), tainted: make([]bool, len(c.f.Threads)), pend: make([]bool, len(c.f.Threads)), poisoned: map[int]bool{}, lastFence: make([]int, len(c.f.Threads))}
	for i := range g.lastFence {
		g.lastFence[i] = -1
	}
	isSource := map[int]bool{}
	for _, s := range sources {
		isSource[s] = true
	}
	var try func(g *taintState) (bool, error)
	try = func(g *taintState) (bool, error) {
		budget--
		if budget < 0 {
			return false, ErrBudget
		}
		held := c.eager(g, isSource)
		if g.pos[thread[target]] > begin[target] {
			return !g.taintedBegin[target], nil
		}
		var objs []int
		for o := range held {
			objs = append(objs, o)
		}
		slices.Sort(objs)
		for _, o := range objs {
			n := g.clone()
			n.poisoned[o] = true
			ok, err := try(n)
			if ok || err != nil {
				return ok, err
			}
		}
		return false, nil
	}
	return try(g)
}

type taintState struct {
	*state
	tainted      []bool // thread tainted from its current position on
	pend         []bool // a relaxed wait observed a poisoned object
	poisoned     map[int]bool
	lastFence    []int // step of the latest cross-worker fence, or -1
	taintedAt    map[[2]int]bool
	taintedBegin map[int]bool // per task: whether its Begin ran tainted
}

func (g *taintState) clone() *taintState {
	s := *g.state
	s.pos = slices.Clone(g.pos)
	s.val = slices.Clone(g.val)
	s.arr = slices.Clone(g.arr)
	n := &taintState{state: &s, tainted: slices.Clone(g.tainted), pend: slices.Clone(g.pend), poisoned: map[int]bool{}, lastFence: slices.Clone(g.lastFence), taintedAt: map[[2]int]bool{}, taintedBegin: map[int]bool{}}
	for k, v := range g.poisoned {
		n.poisoned[k] = v
	}
	for k, v := range g.taintedAt {
		n.taintedAt[k] = v
	}
	for k, v := range g.taintedBegin {
		n.taintedBegin[k] = v
	}
	return n
}

// eager runs everything it can except releases whose release point is
// tainted on objects not yet poisoned, and returns those objects.
// Object ids: counters as is, barriers offset by the counter count.
func (c *checker) eager(g *taintState, isSource map[int]bool) map[int]bool {
	if g.taintedAt == nil {
		g.taintedAt = map[[2]int]bool{}
		g.taintedBegin = map[int]bool{}
	}
	nc := len(c.p.Counters)
	for {
		held := map[int]bool{}
		moved := false
		for t, th := range c.f.Threads {
			for c.enabled(g.state, t) {
				i := g.pos[t]
				op := th.Ops[i]
				obj := -1
				releasing, rpTainted := false, false
				switch op.Kind {
				case schedule.OpSignal:
					obj = int(op.Object)
					if op.Scope.CrossWorker() {
						if !op.Relaxed {
							releasing, rpTainted = true, g.tainted[t]
						} else if g.lastFence[t] >= 0 {
							releasing, rpTainted = true, g.taintedAt[[2]int{t, g.lastFence[t]}]
						}
					}
				case schedule.OpArrive:
					obj = nc + int(op.Object)
					releasing, rpTainted = true, g.tainted[t]
				}
				if releasing && rpTainted && !g.poisoned[obj] {
					held[obj] = true
					break
				}
				switch op.Kind {
				case schedule.OpWait:
					if op.Scope.CrossWorker() && g.poisoned[int(op.Object)] {
						if !op.Relaxed {
							g.tainted[t] = true
						} else {
							g.pend[t] = true
						}
					}
				case schedule.OpAwait:
					if g.poisoned[nc+int(op.Object)] {
						g.tainted[t] = true
					}
				case schedule.OpFence:
					if op.Scope.CrossWorker() {
						if g.pend[t] {
							g.tainted[t] = true
						}
						g.lastFence[t] = i
					}
				case schedule.OpBegin:
					if isSource[int(op.Task)] {
						g.tainted[t] = true
					}
					g.taintedBegin[int(op.Task)] = g.tainted[t]
				}
				g.taintedAt[[2]int{t, i}] = g.tainted[t]
				c.exec(g.state, t, c.capacity())
				moved = true
			}
		}
		if !moved {
			return held
		}
	}
}

// String describes the checker, for test logs.
func (c *checker) String() string { return fmt.Sprintf("defcheck(%d tasks)", len(c.p.Tasks)) }

// geomBudget bounds the pieces and work of one coverage question.
const geomBudget = 1 << 22

// bufferRect is an access's footprint in its buffer's own byte numbering.
func bufferRect(a schedule.Access) geom.Rect {
	return geom.Strided(geom.Pos(0, a.Offset), a.Length, a.Rows, a.Stride)
}
