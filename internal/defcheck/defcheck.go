// Package defcheck is the slow definitional checker that tests hold the
// verifier to. It shares no code with package verify: it works on
// schedule.Lower's normal form, runs one naive withhold-run per question
// (no clocks, no heaps, no sweeps), and decides happens-before by trying
// every order in which tainted releases may reach their objects.
//
// It decides programs without semaphores whose dynamic tasks always find
// a free worker (see [ErrDispatch]). [CodesBudget] runs one withhold-run
// per question and examines every task pair: affordable at hundreds to a
// few thousand tasks. [CodesAtScale] answers the same questions by the
// same definitions with one withhold-run per thread and the task pairs
// whose accesses meet: it decides lowerings of 90,000 tasks.
//
// # Dispatch and residency
//
// The runs apply docs/SEMANTICS.md's residency (workers start in index
// order as others exit; a worker exits once its thread has finished and
// every dynamic task has ended) and its claim rule in the form it takes
// when a worker is always free: a dynamic task's first operation runs only
// once every wait of its guard holds. Both only ever enable more
// operations as others run (counters grow, finished workers stay
// finished), so the system stays persistent and every maximal run reaches
// the same final state: one greedy run, or one withhold-run, answers each
// question. A stuck final state is a deadlock when the unbounded launch
// (every worker resident, no claim rule) also gets stuck, and occupancy
// otherwise.
//
// # Scope races
//
// race.scope is decided by its definition: for every pair of operations
// of different threads on one counter, one a signal, one cta-scoped, some
// execution reaches both with neither happening before the other's
// reaching. Happens-before is tracked as two colors of taint (what the
// first operation happens before, what the second does) and every order
// in which tainted releases of either color may reach their objects is
// tried, running everything else eagerly in between, as for data races.
package defcheck

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/megaproof/megaproof/internal/geom"
	"github.com/megaproof/megaproof/schedule"
)

// ErrSemaphores is returned for programs with semaphores.
var ErrSemaphores = errors.New("defcheck: programs with semaphores are out of scope")

// ErrDispatch is returned for programs whose dynamic tasks may find no free
// worker: some dynamic task is not simple (it waits, awaits or acquires
// after its guard, or acquires in it) and the non-simple ones are not fewer
// than the workers with an empty queue that are resident while dynamic
// tasks remain. Claims then compete for workers, which withhold-runs cannot
// decide.
var ErrDispatch = errors.New("defcheck: dynamic tasks that may find no free worker are out of scope")

// ErrBudget is returned when a happens-before question needed more
// branches than the budget allows, or a coverage question more pieces.
var ErrBudget = errors.New("defcheck: branch budget exhausted")

// Families returns the sorted set of finding families (the part of each
// code before the dot) of a valid program: the families of [Codes].
func Families(p *schedule.Program) ([]string, error) {
	codes, err := Codes(p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range codes {
		f, _, _ := strings.Cut(c, ".")
		out = append(out, f)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Codes returns the sorted set of finding codes of a valid program, by
// docs/SEMANTICS.md's definitions:
//
//   - a racing pair is race.unsynchronized when one body must execute
//     before the other, else race.waw when both write overlapping bytes,
//     race.raw when the earlier task of the task list writes bytes the
//     later reads, race.war otherwise; race.scope by its own definition;
//   - a deadlock is coded by the threads stuck in the maximal run (the
//     only stuck state: the system is persistent), as the explorer codes
//     a stuck state: deadlock.barrier when one is stuck at an await,
//     deadlock.unsatisfiable when one is stuck at a wait whose threshold
//     exceeds its counter's init plus every signal of the program,
//     deadlock.cycle otherwise (workers that never started are not
//     stuck threads; an unclaimed dynamic task is stuck at the first wait
//     of its guard that does not hold);
//   - every other family is its own code.
func Codes(p *schedule.Program) ([]string, error) { return CodesBudget(p, 0) }

// CodesBudget is [Codes] with a budget of work: the operations executed by
// all its runs plus the task pairs it examines. Beyond maxWork (when
// positive) it returns [ErrBudget]. The work depends only on the program,
// never on the machine, so whether a program fits the budget does not
// either.
func CodesBudget(p *schedule.Program, maxWork int64) ([]string, error) {
	return codes(&checker{p: p, f: schedule.Lower(p), maxWork: maxWork})
}

func codes(c *checker) ([]string, error) {
	for _, th := range c.f.Threads {
		for _, op := range th.Ops {
			if op.Kind == schedule.OpAcquire || op.Kind == schedule.OpRelease {
				return nil, ErrSemaphores
			}
		}
	}
	if !c.prepare() {
		return nil, ErrDispatch
	}
	codes := map[string]bool{}
	if err := c.check(codes); err != nil {
		return nil, err
	}
	if c.over() {
		return nil, ErrBudget
	}
	var out []string
	for k := range codes {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}

type checker struct {
	p     *schedule.Program
	f     *schedule.Form
	runs  map[[2]int][]int  // (thread, frozen step) -> positions of its maximal run
	clean map[string][]bool // sources -> tasks that can begin with no source before them
	multi map[string][]int  // several threads frozen -> positions
	sync  uint8             // 0 unknown, 1 synchronizing, 2 not
	guard []int             // per dynamic thread: length of its guard (its leading waits)
	dyn   int               // dynamic threads
	// unbounded drops the claim rule: the unbounded launch's runs.
	unbounded bool
	// scaled selects the paths of [CodesAtScale] (see scale.go).
	scaled bool
	need   map[int][]int32 // scaled: per frozen thread, per task, the first freeze step that lets its Begin run
	writes [][]int32       // scaled: per buffer, the tasks writing it, ascending
	// work counts executed operations and examined pairs; past maxWork
	// (when positive) every run stops and the answer is ErrBudget.
	work, maxWork int64
}

// over reports whether the work budget is spent.
func (c *checker) over() bool { return c.maxWork > 0 && c.work > c.maxWork }

// prepare finds each dynamic task's guard and reports whether the program
// is in the checker's fragment: every dynamic task simple, or the
// non-simple ones fewer than the empty workers resident while dynamic
// tasks remain (they are free for a claim until every dynamic task has
// ended, so F - H >= 1 always, and R - H >= 1 too).
func (c *checker) prepare() bool {
	c.guard = make([]int, len(c.f.Threads))
	nonSimple := 0
	for t := c.f.Workers; t < len(c.f.Threads); t++ {
		c.dyn++
		ops := c.f.Threads[t].Ops
		g := 0
		for g < len(ops) && ops[g].Kind == schedule.OpWait {
			g++
		}
		c.guard[t] = g
		for _, op := range ops[g:] {
			if op.Kind == schedule.OpWait || op.Kind == schedule.OpAwait {
				nonSimple++
				break
			}
		}
	}
	if nonSimple == 0 {
		return true
	}
	empty := 0
	for w := 0; w < min(c.f.Workers, c.capacity()); w++ {
		if len(c.f.Threads[w].Ops) == 0 {
			empty++
		}
	}
	return nonSimple < empty
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
	finished int  // started workers whose thread has finished
	dynLeft  int  // dynamic tasks not ended
	wrapped  bool // some counter went past 2^64-1
}

func (c *checker) initial() *state {
	s := &state{pos: make([]int, len(c.f.Threads)), val: make([]uint64, len(c.p.Counters)), arr: make([]uint64, len(c.p.Barriers)), dynLeft: c.dyn}
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

// startWorkers starts workers in index order while fewer than capacity
// started ones have not exited; none exits before every dynamic task has
// ended.
func (c *checker) startWorkers(s *state, capacity int) {
	exited := 0
	if s.dynLeft == 0 {
		exited = s.finished
	}
	for s.started < c.f.Workers && s.started-exited < capacity {
		if len(c.f.Threads[s.started].Ops) == 0 {
			s.finished++
			if s.dynLeft == 0 {
				exited++
			}
		}
		s.started++
	}
}

func (c *checker) enabled(s *state, t int) bool {
	th := c.f.Threads[t]
	if s.pos[t] >= len(th.Ops) || (t < c.f.Workers && t >= s.started) {
		return false
	}
	if t >= c.f.Workers && s.pos[t] == 0 && !c.unbounded {
		// The claim: every wait of the guard holds.
		for _, op := range th.Ops[:c.guard[t]] {
			if s.val[op.Object] < op.Value {
				return false
			}
		}
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
	c.work++
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
	if s.pos[t] < len(c.f.Threads[t].Ops) {
		return
	}
	if t < c.f.Workers {
		s.finished++
	} else {
		s.dynLeft--
	}
	c.startWorkers(s, capacity)
}

// fixpoint runs every enabled step of unfrozen threads (frozen[t] = step
// before which thread t stops; -1 means not frozen) until none is left.
func (c *checker) fixpoint(s *state, frozen []int, capacity int) {
	if c.scaled {
		c.newRunner(s, frozen, capacity, nil).all()
		return
	}
	for moved := true; moved && !c.over(); {
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
		c.unbounded = true
		all := c.initial()
		c.startWorkers(all, c.f.Workers)
		c.fixpoint(all, nil, c.f.Workers)
		c.unbounded = false
		if c.unfinished(all) {
			fam[c.deadlockCode(s)] = true
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
	// question decides one pair of tasks a < b.
	question := func(a, b int) error {
		if !ran(a) || !ran(b) || thread[a] == thread[b] || !shareArena(touch[a], touch[b]) || !schedule.Conflict(p, a, b) {
			return nil
		}
		ab := c.mustPrecede(a, b, thread, begin)
		ba := c.mustPrecede(b, a, thread, begin)
		if !ab && !ba {
			fam[raceKind(p, a, b)] = true
			return nil
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
			fam["race.unsynchronized"] = true
		}
		return nil
	}
	if c.scaled {
		// The pairs whose accesses' extents meet, ascending as below.
		pairs := c.candidatePairs()
		if c.work += int64(len(p.Tasks) + len(pairs)); c.over() {
			return ErrBudget
		}
		for _, ab := range pairs {
			if err := question(int(ab>>32), int(uint32(ab))); err != nil {
				return err
			}
		}
	} else {
		for a := range p.Tasks {
			if c.work += int64(len(p.Tasks) - a); c.over() {
				return ErrBudget
			}
			for b := a + 1; b < len(p.Tasks); b++ {
				if err := question(a, b); err != nil {
					return err
				}
			}
		}
	}
	race, err := c.scopeRaces(s)
	if err != nil {
		return err
	}
	if race {
		fam["race.scope"] = true
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

// deadlockCode codes the stuck final state s of the maximal run under
// residency and dispatch (see [Codes]).
func (c *checker) deadlockCode(s *state) string {
	total := make([]uint64, len(c.p.Counters))
	for i, k := range c.p.Counters {
		total[i] = k.Init
	}
	for _, th := range c.f.Threads {
		for _, op := range th.Ops {
			if op.Kind == schedule.OpSignal {
				if total[op.Object]+op.Value < total[op.Object] {
					total[op.Object] = ^uint64(0)
				} else {
					total[op.Object] += op.Value
				}
			}
		}
	}
	barrier, unsat := false, false
	for t, th := range c.f.Threads {
		if s.pos[t] >= len(th.Ops) || (t < c.f.Workers && t >= s.started) {
			continue
		}
		op := th.Ops[s.pos[t]]
		if t >= c.f.Workers && s.pos[t] == 0 {
			// Unclaimed: stuck at the first guard wait that does not hold.
			for _, g := range th.Ops[:c.guard[t]] {
				if s.val[g.Object] < g.Value {
					op = g
					break
				}
			}
		}
		switch op.Kind {
		case schedule.OpAwait:
			barrier = true
		case schedule.OpWait:
			if op.Value > total[op.Object] {
				unsat = true
			}
		}
	}
	switch {
	case barrier:
		return "deadlock.barrier"
	case unsat:
		return "deadlock.unsatisfiable"
	}
	return "deadlock.cycle"
}

// raceKind codes a racing pair a < b that need not execute in one order:
// race.waw when their writes overlap, race.raw when a's writes overlap
// b's reads, race.war otherwise (b's writes overlap a's reads).
func raceKind(p *schedule.Program, a, b int) string {
	ta, tb := &p.Tasks[a], &p.Tasks[b]
	switch {
	case overlapAny(p, ta.Writes, tb.Writes):
		return "race.waw"
	case overlapAny(p, ta.Writes, tb.Reads):
		return "race.raw"
	}
	return "race.war"
}

// overlapAny reports whether some access of xs and some of ys share an
// arena byte.
func overlapAny(p *schedule.Program, xs, ys []schedule.Access) bool {
	for _, x := range xs {
		for _, y := range ys {
			if arenaOverlap(p, x, y) {
				return true
			}
		}
	}
	return false
}

// synchronizing reports whether every signal releases and every wait
// acquires at a scope spanning workers, and every worker is resident. Then
// happens-before is exactly must-precede: in any execution, the steps that
// no source happens before, kept in execution order, are themselves an
// execution without the sources (each of their program predecessors is
// among them, and every add a wait among them observed synchronized with it,
// so it is among them too). So a target can begin with no source happening
// before it exactly when it can begin with every source withheld.
//
// The claim rule keeps this: a dynamic thread whose whole guard is among
// those steps claimed with every wait of the guard satisfied by releases
// before the claim, which its own guard waits (later) synchronize with, so
// those releases are among the steps too and the guard holds at the claim
// there as well; a dynamic thread cut inside its guard only loses waits,
// which change nothing for the others, and is dropped from the execution.
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
	if len(sources) == 1 && c.scaled {
		return c.needOf(thread[sources[0]])[target] <= int32(begin[sources[0]])
	}
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
	if c.scaled {
		return c.needOf(thread[a])[b] > int32(begin[a]+1)
	}
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
		cands := func(yield func(int) bool) {
			for w := range p.Tasks {
				if !yield(w) {
					return
				}
			}
		}
		if c.scaled {
			cands = c.writersOf(rd)
		}
		for w := range cands {
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
			if c.scaled && c.someMustPrecede(srcs, r, thread, begin) {
				return true // not clean: look at the next set
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
// source), running everything else eagerly in between. Every task whose
// Begin one of these runs executes with no source before it is remembered
// for the same sources: a later question about it is answered without a
// search.
func (c *checker) canBeClean(sources []int, target int, thread, begin []int) (bool, error) {
	if c.synchronizing() {
		return c.reachableWithout(sources, target, thread, begin), nil
	}
	key := fmt.Sprint(sources)
	known := c.clean[key]
	if known == nil {
		known = make([]bool, len(c.p.Tasks))
		if c.clean == nil {
			c.clean = map[string][]bool{}
		}
		c.clean[key] = known
	}
	if known[target] {
		return true, nil
	}
	isSource := map[int]bool{}
	for _, s := range sources {
		isSource[s] = true
	}
	seed := func(t, i int) uint8 {
		if op := c.f.Threads[t].Ops[i]; op.Kind == schedule.OpBegin && isSource[int(op.Task)] {
			return 1
		}
		return 0
	}
	tt, tb := thread[target], begin[target]
	onBegin := func(task int, colors uint8) {
		if colors&1 == 0 {
			known[task] = true
		}
	}
	// Poisoning an object that the target's thread still waits on before
	// its Begin, with an acquire, an await, or a relaxed wait that a
	// cross-worker fence before the Begin turns into one, taints that
	// wait and so the target: such branches cannot lead to a clean Begin.
	doomed := func(g *taintState, obj int) bool {
		nc := len(c.p.Counters)
		ops := c.f.Threads[tt].Ops
		fence := false
		for i := tb - 1; i >= g.pos[tt]; i-- {
			op := ops[i]
			switch op.Kind {
			case schedule.OpFence:
				fence = fence || op.Scope.CrossWorker()
			case schedule.OpAwait:
				if nc+int(op.Object) == obj {
					return true
				}
			case schedule.OpWait:
				if int(op.Object) == obj && op.Scope.CrossWorker() && (!op.Relaxed || fence) {
					return true
				}
			}
		}
		return false
	}
	return c.poisonSearch(seed, [][2]int{{tt, tb}}, onBegin, doomed, func(g *taintState) (bool, bool) {
		if g.pos[tt] > tb {
			return true, g.at[0] == 0
		}
		return false, false
	})
}

// poisonSearch tries every order in which objects can receive tainted
// releases (a release of color k poisons its object with k), running
// everything else eagerly in between. seed gives the colors an operation
// starts (it and its thread's later operations happen after a source).
// After each eager run, decide says whether the branch is decided and, if
// so, whether it found the execution asked for; an undecided branch that
// holds no release fails.
//
// prune, when not nil, says that poisoning an object in a state cannot
// lead to the execution asked for: that branch is not tried.
func (c *checker) poisonSearch(seed func(t, i int) uint8, watch [][2]int, onBegin func(task int, colors uint8), prune func(g *taintState, obj int) bool, decide func(*taintState) (done, ok bool)) (bool, error) {
	budget := 4096
	n := len(c.f.Threads)
	g := &taintState{state: c.initial(), tainted: make([]uint8, n), pend: make([]uint8, n), poisoned: map[int]uint8{}, fenced: make([]bool, n), fence: make([]uint8, n), watch: watch, at: make([]uint8, len(watch)), onBegin: onBegin}
	// seen holds the states, after their eager run, already tried and
	// found not to lead to the execution asked for: the eager run and the
	// branches depend on the state alone, so trying one again changes
	// nothing (orders of poisoning that commute meet there).
	seen := map[string]bool{}
	var try func(g *taintState) (bool, error)
	try = func(g *taintState) (bool, error) {
		budget--
		if budget < 0 || c.over() {
			return false, ErrBudget
		}
		held := c.eager(g, seed)
		if done, ok := decide(g); done {
			return ok, nil
		}
		k := g.key()
		if seen[k] {
			budget++ // a state met again costs no branch
			return false, nil
		}
		seen[k] = true
		for _, h := range held {
			if prune != nil && prune(g, h[0]) {
				continue
			}
			n := g.clone()
			n.poisoned[h[0]] |= uint8(h[1])
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
	tainted  []uint8 // per thread: colors of the sources before its current position
	pend     []uint8 // per thread: colors its relaxed waits observed, for its next fence
	poisoned map[int]uint8
	fenced   []bool                       // per thread: whether it has executed a cross-worker fence
	fence    []uint8                      // per thread: its colors at its latest cross-worker fence
	watch    [][2]int                     // (thread, step) operations whose colors decide reads (shared)
	at       []uint8                      // colors of the watched operations, once executed
	onBegin  func(task int, colors uint8) // called at every Begin the eager run executes (shared)
}

// key encodes what the future of a taint state depends on: positions,
// counters, arrivals, residency, per-thread colors (held, pending and at
// the latest fence) and the poisoned objects.
func (g *taintState) key() string {
	b := make([]byte, 0, 16*len(g.pos)+8*len(g.val)+8*len(g.arr)+16)
	for _, x := range g.pos {
		b = binary.AppendUvarint(b, uint64(x))
	}
	for _, x := range g.val {
		b = binary.AppendUvarint(b, x)
	}
	for _, x := range g.arr {
		b = binary.AppendUvarint(b, x)
	}
	b = binary.AppendUvarint(b, uint64(g.started))
	b = binary.AppendUvarint(b, uint64(g.finished))
	b = binary.AppendUvarint(b, uint64(g.dynLeft))
	if g.wrapped {
		b = append(b, 1)
	}
	for t := range g.pos {
		f := uint8(0)
		if g.fenced[t] {
			f = 1 | g.fence[t]<<1
		}
		b = append(b, g.tainted[t], g.pend[t], f)
	}
	b = append(b, g.at...)
	objs := make([]int, 0, len(g.poisoned))
	for o := range g.poisoned {
		objs = append(objs, o)
	}
	slices.Sort(objs)
	for _, o := range objs {
		b = binary.AppendUvarint(b, uint64(o))
		b = append(b, g.poisoned[o])
	}
	return string(b)
}

func (g *taintState) clone() *taintState {
	s := *g.state
	s.pos = slices.Clone(g.pos)
	s.val = slices.Clone(g.val)
	s.arr = slices.Clone(g.arr)
	n := &taintState{state: &s, tainted: slices.Clone(g.tainted), pend: slices.Clone(g.pend), poisoned: make(map[int]uint8, len(g.poisoned)+1),
		fenced: slices.Clone(g.fenced), fence: slices.Clone(g.fence), watch: g.watch, at: slices.Clone(g.at), onBegin: g.onBegin}
	for k, v := range g.poisoned {
		n.poisoned[k] = v
	}
	return n
}

// eager runs everything it can except releases whose release point carries
// a color their object has not received, and returns those releases'
// (object, colors), sorted and without repeats. Object ids: counters as
// is, barriers offset by the counter count.
func (c *checker) eager(g *taintState, seed func(t, i int) uint8) [][2]int {
	nc := len(c.p.Counters)
	for !c.over() {
		var held [][2]int
		moved := false
		for t, th := range c.f.Threads {
			for c.enabled(g.state, t) {
				i := g.pos[t]
				op := th.Ops[i]
				g.tainted[t] |= seed(t, i)
				obj := -1
				releasing, rp := false, uint8(0)
				switch op.Kind {
				case schedule.OpSignal:
					obj = int(op.Object)
					if op.Scope.CrossWorker() {
						if !op.Relaxed {
							releasing, rp = true, g.tainted[t]
						} else if g.fenced[t] {
							releasing, rp = true, g.fence[t]
						}
					}
				case schedule.OpArrive:
					obj = nc + int(op.Object)
					releasing, rp = true, g.tainted[t]
				}
				if releasing && rp&^g.poisoned[obj] != 0 {
					held = append(held, [2]int{obj, int(rp)})
					break
				}
				switch op.Kind {
				case schedule.OpWait:
					if op.Scope.CrossWorker() {
						if !op.Relaxed {
							g.tainted[t] |= g.poisoned[int(op.Object)]
						} else {
							g.pend[t] |= g.poisoned[int(op.Object)]
						}
					}
				case schedule.OpAwait:
					g.tainted[t] |= g.poisoned[nc+int(op.Object)]
				case schedule.OpFence:
					if op.Scope.CrossWorker() {
						g.tainted[t] |= g.pend[t]
						g.fenced[t], g.fence[t] = true, g.tainted[t]
					}
				}
				if op.Kind == schedule.OpBegin && g.onBegin != nil {
					g.onBegin(int(op.Task), g.tainted[t])
				}
				for k, w := range g.watch {
					if w[0] == t && w[1] == i {
						g.at[k] = g.tainted[t]
					}
				}
				c.exec(g.state, t, c.capacity())
				moved = true
			}
		}
		if !moved {
			slices.SortFunc(held, func(x, y [2]int) int {
				if x[0] != y[0] {
					return x[0] - y[0]
				}
				return x[1] - y[1]
			})
			return slices.Compact(held)
		}
	}
	return nil // the budget is spent: the caller returns ErrBudget
}

// scopeRaces reports whether some pair of operations of different threads
// on one counter, one a signal and one cta-scoped, can race (see
// scopeRace). final is the maximal run's state: an operation it does not
// reach is never reached.
func (c *checker) scopeRaces(final *state) (bool, error) {
	type use struct{ t, i int }
	var uses [][]use
	uses = make([][]use, len(c.p.Counters))
	for t, th := range c.f.Threads {
		for i, op := range th.Ops {
			if op.Kind == schedule.OpWait || op.Kind == schedule.OpSignal {
				uses[op.Object] = append(uses[op.Object], use{t, i})
			}
		}
	}
	for _, us := range uses {
		if c.scaled && !slices.ContainsFunc(us, func(x use) bool { return c.f.Threads[x.t].Ops[x.i].Scope == schedule.ScopeCTA }) {
			continue // no pair of this counter has a cta-scoped operation
		}
		for k, x := range us {
			ox := c.f.Threads[x.t].Ops[x.i]
			for _, y := range us[k+1:] {
				oy := c.f.Threads[y.t].Ops[y.i]
				if x.t == y.t || ox.Kind != schedule.OpSignal && oy.Kind != schedule.OpSignal || ox.Scope != schedule.ScopeCTA && oy.Scope != schedule.ScopeCTA {
					continue
				}
				if !c.reached(final, x.t, x.i) || !c.reached(final, y.t, y.i) {
					continue
				}
				race, err := c.scopeRace(x.t, x.i, y.t, y.i)
				if err != nil || race {
					return race, err
				}
			}
		}
	}
	return false, nil
}

// reached reports whether operation i of thread t is reached in s: it has
// executed, or it is the next operation of a running thread (a started
// worker, or a dynamic task whose first operation, its claim, has run).
func (c *checker) reached(s *state, t, i int) bool {
	switch {
	case s.pos[t] > i:
		return true
	case s.pos[t] < i:
		return false
	case t < c.f.Workers:
		return t < s.started
	}
	return i > 0
}

// scopeRace decides whether some execution reaches operation ix of thread
// u and operation iy of thread v with neither happening before the other's
// reaching: with x's successors tainted one color and y's another, whether
// both get reached with the step before y (if any) free of x's color and
// the step before x free of y's.
func (c *checker) scopeRace(u, ix, v, iy int) (bool, error) {
	seed := func(t, i int) uint8 {
		switch {
		case t == u && i == ix:
			return 1
		case t == v && i == iy:
			return 2
		}
		return 0
	}
	return c.poisonSearch(seed, [][2]int{{v, iy - 1}, {u, ix - 1}}, nil, nil, func(g *taintState) (bool, bool) {
		if iy > 0 && g.pos[v] >= iy && g.at[0]&1 != 0 {
			return true, false // x happens before y's predecessor
		}
		if ix > 0 && g.pos[u] >= ix && g.at[1]&2 != 0 {
			return true, false
		}
		if c.reached(g.state, u, ix) && c.reached(g.state, v, iy) {
			return true, true
		}
		return false, false
	})
}

// String describes the checker, for test logs.
func (c *checker) String() string { return fmt.Sprintf("defcheck(%d tasks)", len(c.p.Tasks)) }

// geomBudget bounds the pieces and work of one coverage question.
const geomBudget = 1 << 22

// bufferRect is an access's footprint in its buffer's own byte numbering.
func bufferRect(a schedule.Access) geom.Rect {
	return geom.Strided(geom.Pos(0, a.Offset), a.Length, a.Rows, a.Stride)
}

// arenaOverlap reports whether two accesses share an arena byte (a buffer
// without arena is its own arena).
func arenaOverlap(p *schedule.Program, x, y schedule.Access) bool {
	ax, bx := p.Buffers[x.Buffer], p.Buffers[y.Buffer]
	kx, ky := -1-int64(x.Buffer), -1-int64(y.Buffer)
	ox, oy := uint64(0), uint64(0)
	if ax.Arena != schedule.NoArena {
		kx, ox = int64(ax.Arena), ax.Offset
	}
	if bx.Arena != schedule.NoArena {
		ky, oy = int64(bx.Arena), bx.Offset
	}
	return kx == ky && geom.Overlap(geom.Strided(geom.Pos(ox, x.Offset), x.Length, x.Rows, x.Stride), geom.Strided(geom.Pos(oy, y.Offset), y.Length, y.Rows, y.Stride))
}
