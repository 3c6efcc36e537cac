package explore

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"runtime"
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// stuckRec is the first stuck state found for one code.
type stuckRec struct {
	tasks []int
	trace []schedule.Event
	pos   []int32  // thread positions of the stuck state
	vals  []uint64 // its object values
}

// scopeRec is the first trace found for a race.scope between two tasks.
type scopeRec struct {
	trace []schedule.Event
	x, y  int32 // global op ids, x of the lower task
}

// found collects what one exploration observed, each with its first trace.
type found struct {
	races      map[[2]int32][]schedule.Event // conflicting pair (lower task first) -> trace
	raceOrder  [][2]int32
	scope      map[[2]int32]scopeRec // race.scope task pair (lower first)
	scopeOrder [][2]int32
	uninit     map[int32][]schedule.Event
	overflow   map[int32]stuckRec // counter -> signalling task and trace
	stuck      map[string]stuckRec
	anyStuck   *stuckRec
	begun      []bool // tasks whose Begin was executed
}

// search is one exploration: a depth-first search over the states of the
// program's normal form in one mode.
type search struct {
	m     *model
	hb    bool    // track happens-before clocks; report races and uninitialized reads
	md    mode    // residency and dispatch rules
	limit []int32 // per thread: operations it may execute (a frozen thread stops early)
	deadl bool    // report stuck states
	// firstStuck ends the exploration at its first stuck state (only
	// whether one is reachable is asked).
	firstStuck bool
	b          *budget
	out        *found

	S      int // ints per level: positions, clocks, finished-worker count
	V      int // values per level
	klen   int // ints in a key
	offVC  int
	offR   int
	offPnd int
	offFen int

	ints   []int32
	vals   []uint64
	events []schedule.Event
	succ   []int32
	frames []frame
	levels int // levels the path can hold (reserved in the budget)

	// Visited set: exact keys in chunks, open addressing over their indices.
	wide     bool
	kl       int // bytes per key
	perChunk int // keys per chunk
	keyCap   int // keys the chunks hold (the first grows to perChunk by doubling)
	kbuf     []byte
	chunks   [][]byte
	table    []int32
	n        int
	mem      int64 // bytes this exploration has reserved

	enabled []bool
	inSet   []bool
	work    []int32
	cand    []int32
	spanBuf [][2]int64

	// Facts of the state being expanded (see facts).
	dynLeft    int  // dynamic threads not finished
	free       bool // a worker is free for any claim
	freeSimple bool // a worker is free for a simple task's claim
}

type frame struct{ start, next, end int32 }

func newSearch(m *model, hb bool, md mode, limit []int32, b *budget) *search {
	s := &search{m: m, hb: hb, md: md, limit: limit, deadl: limit == nil, b: b}
	T := m.T
	if s.limit == nil {
		s.limit = m.lens
	}
	s.klen = m.keyLen(hb)
	s.S = s.klen + 1
	s.V = m.nSync
	if hb {
		s.offVC = T
		s.offR = s.offVC + T*T
		s.offPnd = s.offR + m.nSync*T
		s.offFen = s.offPnd + T*T
	}
	s.levels = 1
	for t := 0; t < T; t++ {
		if m.lens[t] > 250 {
			s.wide = true
		}
		s.levels += int(s.limit[t])
	}
	s.kl = s.klen
	if s.wide {
		s.kl *= 4
	}
	s.perChunk = max(1, chunkBytes/max(s.kl, 1))
	s.out = &found{
		races:    map[[2]int32][]schedule.Event{},
		scope:    map[[2]int32]scopeRec{},
		uninit:   map[int32][]schedule.Event{},
		overflow: map[int32]stuckRec{},
		stuck:    map[string]stuckRec{},
		begun:    make([]bool, len(m.p.Tasks)),
	}
	s.enabled = make([]bool, T)
	s.inSet = make([]bool, T)
	return s
}

// pathBytes is what the search path takes at its deepest.
func (s *search) pathBytes() int64 {
	return int64(s.levels) * (4*int64(s.S) + 8*int64(s.V) + 8 + 12 + 4*int64(s.m.T))
}

func (s *search) level(d int) ([]int32, []uint64) {
	return s.ints[d*s.S : (d+1)*s.S], s.vals[d*s.V : (d+1)*s.V]
}

// reserve takes n bytes from the budget for this exploration.
func (s *search) reserve(n int64) bool {
	if !s.b.reserve(n) {
		return false
	}
	s.mem += n
	return true
}

// trace returns a copy of the current path's events for a finding, or
// ok=false when the memory budget cannot hold it.
func (s *search) trace() ([]schedule.Event, bool) {
	if !s.b.reserve(8 * int64(len(s.events))) {
		return nil, false
	}
	return append([]schedule.Event{}, s.events...), true
}

// run explores every state reachable from the initial one (up to the
// partial-order reduction) and reports whether it finished.
func (s *search) run() bool {
	defer s.done()
	m := s.m
	if !s.reserve(s.pathBytes() + 4*1024) {
		return false
	}
	s.ints = make([]int32, s.levels*s.S)
	s.vals = make([]uint64, s.levels*s.V)
	s.events = make([]schedule.Event, 0, s.levels)
	s.frames = make([]frame, 0, s.levels)
	s.succ = make([]int32, 0, s.levels*m.T)
	s.table = make([]int32, 1024)
	for i := range s.table {
		s.table[i] = -1
	}
	st, v := s.level(0)
	for i, c := range m.p.Counters {
		v[i] = c.Init
	}
	for i, sm := range m.p.Semaphores {
		v[m.nc+m.nb+i] = sm.Tokens
	}
	if s.hb && m.scoped {
		// The first operations of the workers resident from the start are
		// reached at once.
		n := s.startedCount(st)
		for w := 0; w < n; w++ {
			if m.lens[w] > 0 {
				s.reach(st, w, 0, false)
			}
		}
	}
	s.canon(st)
	if fresh, ok := s.insert(st[:s.klen]); !ok || !fresh || !s.b.take() {
		return false
	}
	s.expand(0)
	for len(s.frames) > 0 {
		if s.b.stopped() {
			return false
		}
		if s.firstStuck && s.out.anyStuck != nil {
			return true
		}
		d := len(s.frames) - 1
		fr := &s.frames[d]
		if fr.next == fr.end {
			s.succ = s.succ[:fr.start]
			s.frames = s.frames[:d]
			continue
		}
		t := s.succ[fr.next]
		fr.next++
		cur, cv := s.level(d)
		nxt, nv := s.level(d + 1)
		copy(nxt, cur)
		copy(nv, cv)
		s.events = append(s.events[:d], schedule.Event{Thread: t, Step: nxt[t]})
		s.apply(nxt, nv, int(t))
		s.canon(nxt)
		fresh, ok := s.insert(nxt[:s.klen])
		if !ok {
			return false
		}
		if !fresh {
			continue
		}
		if !s.b.take() {
			return false
		}
		s.expand(d + 1)
	}
	return !s.b.stopped()
}

// done gives the exploration's memory back: its key chunks to the pool for
// the next exploration, the rest to the collector.
func (s *search) done() {
	for _, c := range s.chunks {
		s.b.pool = append(s.b.pool, c)
	}
	s.b.release(s.mem)
	big := s.mem > 64<<20
	s.mem = 0
	s.chunks, s.table, s.ints, s.vals, s.succ, s.frames, s.events = nil, nil, nil, nil, nil, nil, nil
	s.keyCap = 0
	if big {
		// Collect the path and table now, so that the next exploration
		// reuses their memory instead of adding to it.
		runtime.GC()
	}
}

// expand pushes a frame with the persistent set of level d, or records a
// stuck state.
func (s *search) expand(d int) {
	st, v := s.level(d)
	start := int32(len(s.succ))
	s.persistent(st, v)
	if int32(len(s.succ)) == start {
		if s.deadl {
			s.terminal(st)
		}
		return
	}
	s.frames = append(s.frames, frame{start, start, int32(len(s.succ))})
}

// startedCount is the number of workers started in state st: all of them
// without residency; the first capacity ones while some dynamic task is
// left (no worker exits before every dynamic task has ended); then those
// whose threshold of finished non-empty workers is met.
func (s *search) startedCount(st []int32) int {
	m := s.m
	if !s.md.resid {
		return m.W
	}
	for t := m.W; t < m.T; t++ {
		if st[t] < m.lens[t] {
			return min(m.W, m.cap)
		}
	}
	n := 0
	for n < m.W && st[s.S-1] >= m.theta[n] {
		n++
	}
	return n
}

// facts computes the dispatch facts of state st: whether a worker is free
// for any claim (F - H >= 1: resident workers whose thread has finished,
// less claimed unfinished non-simple tasks) and for a simple task's claim
// (R - H >= 1: resident workers less those held).
func (s *search) facts(st []int32) {
	m := s.m
	s.dynLeft = 0
	for t := m.W; t < m.T; t++ {
		if st[t] < m.lens[t] {
			s.dynLeft++
		}
	}
	s.free, s.freeSimple = true, true
	if !s.md.dispatch || s.dynLeft == 0 {
		return
	}
	// No worker exits while a dynamic task is left: the resident ones are
	// those started first.
	R := m.W
	if s.md.resid {
		R = min(m.W, m.cap)
	}
	F, H := 0, 0
	for w := 0; w < R; w++ {
		if st[w] >= m.lens[w] {
			F++
		}
	}
	for t := m.W; t < m.T; t++ {
		if !m.simple[t] && st[t] >= 1 && st[t] < m.lens[t] {
			H++
		}
	}
	s.free, s.freeSimple = F-H >= 1, R-H >= 1
}

// started reports whether worker t has started, given the facts of st.
func (s *search) started(st []int32, t int) bool {
	m := s.m
	switch {
	case !s.md.resid:
		return true
	case s.dynLeft > 0:
		return t < m.cap
	}
	return st[s.S-1] >= m.theta[t]
}

// holds reports whether the condition of operation op holds on its own.
func (s *search) holds(v []uint64, op *schedule.Op) bool { return s.m.holdsAt(v, op) }

// claimable reports whether dynamic thread t, not yet claimed, may be
// claimed: its guard holds and a worker is free for it. It returns the
// first guard operation that does not hold (-1 if none).
func (s *search) claimable(v []uint64, t int) (bool, int) {
	m := s.m
	for i := range m.guard[t] {
		if !s.holds(v, &m.ops[t][i]) {
			return false, int(i)
		}
	}
	return s.free || m.simple[t] && s.freeSimple, -1
}

// isEnabled reports whether thread t's next operation is enabled in the
// state (st, v), whose facts are computed.
func (s *search) isEnabled(st []int32, v []uint64, t int) bool {
	m := s.m
	p := st[t]
	if p >= s.limit[t] {
		return false
	}
	if t < m.W {
		if !s.started(st, t) {
			return false
		}
	} else if s.md.dispatch && p == 0 {
		if ok, _ := s.claimable(v, t); !ok {
			return false
		}
	}
	return s.holds(v, &m.ops[t][p])
}

// remaining reports whether thread u, from its position on, has an access
// to obj of a kind in mask.
func (s *search) remaining(st []int32, u int, obj int32, mask uint8) bool {
	if st[u] >= s.limit[u] {
		return false
	}
	i := int(obj)*s.m.T + u
	for k := 0; k < nAcc; k++ {
		if mask&(1<<k) != 0 && s.m.last[k][i] >= st[u] {
			return true
		}
	}
	return false
}

// persistent appends to s.succ a persistent set of enabled threads: the
// enabled members of the smallest closure of threads under "an enabled
// member's operation is dependent with some remaining operation of the
// thread" and "a disabled member can be enabled only by some remaining
// operation of the thread".
func (s *search) persistent(st []int32, v []uint64) {
	m := s.m
	T := m.T
	s.facts(st)
	nEn := 0
	for t := 0; t < T; t++ {
		s.enabled[t] = s.isEnabled(st, v, t)
		if s.enabled[t] {
			nEn++
		}
	}
	if nEn == 0 {
		return
	}
	// An enabled operation touching no object is independent of everything.
	for t := 0; t < T; t++ {
		if s.enabled[t] {
			if !s.dependent(t, st[t]) {
				s.succ = append(s.succ, int32(t))
				return
			}
		}
	}
	best := -1
	s.cand = s.cand[:0]
	for seed := 0; seed < T && best != 1; seed++ {
		if !s.enabled[seed] {
			continue
		}
		n := s.closure(st, v, seed, best)
		if n < 0 || (best >= 0 && n >= best) {
			continue
		}
		best = n
		s.cand = s.cand[:0]
		for t := 0; t < T; t++ {
			if s.inSet[t] && s.enabled[t] {
				s.cand = append(s.cand, int32(t))
			}
		}
	}
	s.succ = append(s.succ, s.cand...)
}

// closure computes the closure from seed into s.inSet and returns the
// number of enabled members, or -1 once it reaches bound (0 = no bound).
func (s *search) closure(st []int32, v []uint64, seed, bound int) int {
	m := s.m
	T := m.T
	for i := range s.inSet {
		s.inSet[i] = false
	}
	s.inSet[seed] = true
	s.work = append(s.work[:0], int32(seed))
	n := 1
	add := func(u int) {
		s.inSet[u] = true
		s.work = append(s.work, int32(u))
		if s.enabled[u] {
			n++
		}
	}
	enablers := func(obj int32) {
		for w := 0; w < T; w++ {
			if !s.inSet[w] && s.remaining(st, w, obj, 1<<accEnable) {
				add(w)
			}
		}
	}
	for len(s.work) > 0 {
		if bound > 0 && n >= bound {
			return -1
		}
		u := int(s.work[len(s.work)-1])
		s.work = s.work[:len(s.work)-1]
		if st[u] >= s.limit[u] {
			continue
		}
		if s.enabled[u] {
			id := m.opBase[u] + st[u]
			for _, a := range m.accs[m.accOff[id]:m.accOff[id+1]] {
				for w := 0; w < T; w++ {
					if !s.inSet[w] && s.remaining(st, w, a.obj, depMask[a.kind]) {
						add(w)
					}
				}
			}
			continue
		}
		// A disabled member stays disabled while one condition of it stays
		// false: add every thread that could make that one true.
		op := &m.ops[u][st[u]]
		switch {
		case u < m.W && !s.started(st, u):
			enablers(m.objF)
		case u >= m.W && s.md.dispatch && st[u] == 0:
			if _, g := s.claimable(v, u); g >= 0 {
				enablers(s.object(&m.ops[u][g]))
			} else if s.holds(v, op) {
				// No worker is free: one frees when a static thread or a
				// non-simple task ends.
				enablers(m.objPool)
			} else {
				enablers(s.object(op))
			}
		default:
			enablers(s.object(op))
		}
	}
	if bound > 0 && n >= bound {
		return -1
	}
	return n
}

// object is the synchronization object a blocking operation waits on.
func (s *search) object(op *schedule.Op) int32 {
	switch op.Kind {
	case schedule.OpWait:
		return op.Object
	case schedule.OpAwait:
		return int32(s.m.nc) + op.Object
	}
	return int32(s.m.nc+s.m.nb) + op.Object
}

// dependent reports whether thread t's operation at position i has an
// access that some other operation can depend on.
func (s *search) dependent(t int, i int32) bool {
	m := s.m
	id := m.opBase[t] + i
	for _, a := range m.accs[m.accOff[id]:m.accOff[id+1]] {
		if depMask[a.kind] != 0 {
			return true
		}
	}
	return false
}

func join(dst, src []int32) {
	for i, x := range src {
		if x > dst[i] {
			dst[i] = x
		}
	}
}

func (s *search) vc(st []int32, t int) []int32 {
	T := s.m.T
	return st[s.offVC+t*T : s.offVC+(t+1)*T]
}

func (s *search) rel(st []int32, obj int) []int32 {
	T := s.m.T
	return st[s.offR+obj*T : s.offR+(obj+1)*T]
}

func (s *search) pend(st []int32, t int) []int32 {
	T := s.m.T
	return st[s.offPnd+t*T : s.offPnd+(t+1)*T]
}

func (s *search) fence(st []int32, t int) []int32 {
	T := s.m.T
	return st[s.offFen+t*T : s.offFen+(t+1)*T]
}

// apply executes thread t's next operation on the level (st, v).
func (s *search) apply(st []int32, v []uint64, t int) {
	m := s.m
	at := st[t]
	op := &m.ops[t][at]
	cw := op.Scope.CrossWorker()
	if s.hb {
		// Thread t's own component: its prefix through this operation.
		s.vc(st, t)[t] = m.clamp[t][at+1]
	}
	watch := s.hb && m.scoped
	startedBefore := 0
	if watch {
		startedBefore = s.startedCount(st)
	}
	switch op.Kind {
	case schedule.OpWait:
		if s.hb && cw {
			if op.Relaxed {
				join(s.pend(st, t), s.rel(st, int(op.Object)))
			} else {
				join(s.vc(st, t), s.rel(st, int(op.Object)))
			}
		}
	case schedule.OpSignal:
		x, carry := bits.Add64(v[op.Object], op.Value, 0)
		if carry != 0 {
			x = ^uint64(0)
		}
		v[op.Object] = x
		if carry != 0 || x > m.p.Counters[op.Object].Max() {
			if _, ok := s.out.overflow[op.Object]; !ok {
				if tr, ok := s.trace(); ok {
					s.out.overflow[op.Object] = stuckRec{tasks: []int{int(op.Task)}, trace: tr}
				}
			}
		}
		if s.hb && cw {
			if op.Relaxed {
				join(s.rel(st, int(op.Object)), s.fence(st, t))
			} else {
				join(s.rel(st, int(op.Object)), s.vc(st, t))
			}
		}
	case schedule.OpArrive:
		v[m.nc+int(op.Object)]++
		if s.hb {
			join(s.rel(st, m.nc+int(op.Object)), s.vc(st, t))
		}
	case schedule.OpAwait:
		if s.hb {
			join(s.vc(st, t), s.rel(st, m.nc+int(op.Object)))
		}
	case schedule.OpAcquire:
		v[m.nc+m.nb+int(op.Object)] -= op.Value
		if s.hb && cw {
			join(s.vc(st, t), s.rel(st, m.nc+m.nb+int(op.Object)))
		}
	case schedule.OpRelease:
		v[m.nc+m.nb+int(op.Object)] += op.Value
		if s.hb && cw {
			join(s.rel(st, m.nc+m.nb+int(op.Object)), s.vc(st, t))
		}
	case schedule.OpFence:
		if s.hb && cw {
			c := s.vc(st, t)
			join(c, s.pend(st, t))
			copy(s.fence(st, t), c)
		}
	case schedule.OpBegin:
		s.out.begun[op.Task] = true
		if s.hb {
			s.checkBegin(st, t, op.Task)
		}
	}
	st[t]++
	if s.md.resid && t < m.W && st[t] == m.lens[t] {
		st[s.S-1]++
	}
	if !watch {
		return
	}
	// race.scope: the operations this step makes reached. A dynamic
	// task's claim is reached when it executes; the next operation of the
	// thread once its predecessor has; a worker's first operation when the
	// worker starts.
	if t >= m.W && at == 0 {
		s.reach(st, t, 0, false)
	}
	if st[t] < m.lens[t] {
		s.reach(st, t, st[t], true)
	}
	if s.md.resid {
		for w := startedBefore; w < s.startedCount(st); w++ {
			if m.lens[w] > 0 {
				s.reach(st, w, 0, false)
			}
		}
	}
}

// reached reports whether operation ix of thread u is reached in st: it
// has executed, or it is the next operation of a running thread (a started
// worker, or a claimed dynamic task).
func (s *search) reached(st []int32, u int, ix int32) bool {
	switch {
	case st[u] > ix:
		return true
	case st[u] < ix:
		return false
	case u < s.m.W:
		return s.startedCount(st) > u
	}
	return ix > 0
}

// reach judges operation iy of thread v, just reached in st, against its
// race.scope partners already reached: they race unless the partner has
// executed and happens before iy's predecessor (hasPred: iy has one, and
// v's clock is its clock).
func (s *search) reach(st []int32, v int, iy int32, hasPred bool) {
	m := s.m
	y := m.opBase[v] + iy
	ty := m.ops[v][iy].Task
	for _, x := range m.partners[y] {
		u := int(m.opTh[x])
		ix := x - m.opBase[u]
		tx := m.ops[u][ix].Task
		key := [2]int32{min(tx, ty), max(tx, ty)}
		if _, ok := s.out.scope[key]; ok || !s.reached(st, u, ix) {
			continue
		}
		if st[u] > ix && hasPred && s.vc(st, v)[u] > ix {
			continue // x happens before y's predecessor
		}
		tr, ok := s.trace()
		if !ok {
			return
		}
		r := scopeRec{trace: tr, x: x, y: y}
		if tx > ty {
			r.x, r.y = y, x
		}
		s.out.scope[key] = r
		s.out.scopeOrder = append(s.out.scopeOrder, key)
	}
}

// checkBegin judges the races and the uninitialized read that task b's
// Begin on thread tb exhibits.
func (s *search) checkBegin(st []int32, tb int, b int32) {
	m := s.m
	c := s.vc(st, tb)
	for _, a := range m.conflicts[b] {
		ta := m.taskThread[a]
		if st[ta] <= m.taskBegin[a] || c[ta] > m.taskEnd[a] {
			continue
		}
		key := [2]int32{min(a, b), max(a, b)}
		if _, ok := s.out.races[key]; !ok {
			if tr, ok := s.trace(); ok {
				s.out.races[key] = tr
				s.out.raceOrder = append(s.out.raceOrder, key)
			}
		}
	}
	if len(m.reads[b]) == 0 {
		return
	}
	if _, ok := s.out.uninit[b]; ok {
		return
	}
	for _, rc := range m.reads[b] {
		cover := s.spanBuf[:0]
		for i, w := range rc.writers {
			if c[m.taskThread[w]] > m.taskEnd[w] {
				cover = append(cover, rc.wspans[i]...)
			}
		}
		s.spanBuf = cover
		slices.SortFunc(cover, func(x, y [2]int64) int {
			if x[0] < y[0] {
				return -1
			}
			if x[0] > y[0] {
				return 1
			}
			return 0
		})
		for _, sp := range rc.spans {
			if !covered(cover, sp[0], sp[1]) {
				if tr, ok := s.trace(); ok {
					s.out.uninit[b] = tr
				}
				return
			}
		}
	}
}

// covered reports whether the union of spans, sorted by start, contains [lo, hi).
func covered(spans [][2]int64, lo, hi int64) bool {
	at := lo
	for _, sp := range spans {
		if at >= hi {
			return true
		}
		if sp[0] > at {
			return false
		}
		if sp[1] > at {
			at = sp[1]
		}
	}
	return at >= hi
}

// canon clears clock parts that no later operation reads, so states that
// differ only there share one key.
func (s *search) canon(st []int32) {
	if !s.hb {
		return
	}
	m := s.m
	T := m.T
	for t := 0; t < T; t++ {
		if st[t] >= m.lens[t] {
			clear(s.vc(st, t))
		}
		if m.lastCWFence[t] < st[t] {
			clear(s.pend(st, t))
		}
		if m.lastRelaxedCW[t] < st[t] {
			clear(s.fence(st, t))
		}
	}
	// Clamp every component to the last relevant prefix it covers; this
	// commutes with joins and keeps every comparison's outcome.
	for row := s.offVC; row < s.klen; row += T {
		c := st[row : row+T]
		for u, x := range c {
			c[u] = m.clamp[u][x]
		}
	}
	for obj := 0; obj < m.nSync; obj++ {
		used := false
		for u := 0; u < T && !used; u++ {
			used = s.remaining(st, u, int32(obj), 1<<accRead)
		}
		if !used {
			clear(s.rel(st, obj))
		}
	}
}

// hashSeed seeds the visited sets' hash (it decides where keys go in the
// table, never which states are explored).
var hashSeed = maphash.MakeSeed()

func hashKey(b []byte) uint64 { return maphash.Bytes(hashSeed, b) }

// key returns the stored key of state j.
func (s *search) key(j int) []byte {
	c := s.chunks[j/s.perChunk]
	o := (j % s.perChunk) * s.kl
	return c[o : o+s.kl]
}

// insert adds key to the visited set and reports whether it was new; ok is
// false when the memory budget cannot hold it.
func (s *search) insert(key []int32) (fresh, ok bool) {
	b := s.kbuf[:0]
	if s.wide {
		for _, x := range key {
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		}
	} else {
		for _, x := range key {
			b = append(b, byte(x))
		}
	}
	s.kbuf = b
	mask := uint64(len(s.table) - 1)
	i := hashKey(b) & mask
	for ; s.table[i] >= 0; i = (i + 1) & mask {
		if string(s.key(int(s.table[i]))) == string(b) {
			return false, true
		}
	}
	if s.n == s.keyCap && !s.grow() {
		return false, false
	}
	if 2*(s.n+1) > len(s.table) {
		if !s.rehash() {
			return false, false
		}
		mask = uint64(len(s.table) - 1)
		for i = hashKey(b) & mask; s.table[i] >= 0; i = (i + 1) & mask {
		}
	}
	copy(s.key(s.n), b)
	s.table[i] = int32(s.n)
	s.n++
	return true, true
}

// firstKeys is what the first key chunk holds at first: small
// explorations, the common case, take a few KiB instead of a whole chunk.
const firstKeys = 64

// grow makes room for more keys: the first chunk doubles until it holds
// perChunk keys, then whole chunks follow. It reports false when the memory
// budget cannot hold them.
func (s *search) grow() bool {
	switch {
	case len(s.chunks) == 0 && s.perChunk > firstKeys && !s.b.pooled(s.perChunk*s.kl):
		if !s.reserve(int64(firstKeys * s.kl)) {
			return false
		}
		s.chunks = append(s.chunks, make([]byte, firstKeys*s.kl))
		s.keyCap = firstKeys
	case len(s.chunks) == 1 && s.keyCap < s.perChunk:
		n := min(2*s.keyCap, s.perChunk)
		old := int64(len(s.chunks[0]))
		if !s.reserve(int64(n * s.kl)) {
			return false
		}
		c := make([]byte, n*s.kl)
		copy(c, s.chunks[0])
		s.chunks[0] = c
		s.keyCap = n
		s.b.release(old)
		s.mem -= old
	default:
		c := s.b.chunk(s.perChunk * s.kl)
		if c == nil {
			return false
		}
		s.mem += int64(len(c))
		s.chunks = append(s.chunks, c)
		s.keyCap += s.perChunk
	}
	return true
}

// rehash doubles the table, reserving the new one while the old is held.
func (s *search) rehash() bool {
	old := int64(4 * len(s.table))
	if !s.reserve(2 * old) {
		return false
	}
	t := make([]int32, 2*len(s.table))
	for i := range t {
		t[i] = -1
	}
	mask := uint64(len(t) - 1)
	for j := 0; j < s.n; j++ {
		i := hashKey(s.key(j)) & mask
		for t[i] >= 0 {
			i = (i + 1) & mask
		}
		t[i] = int32(j)
	}
	s.table = t
	s.b.release(old)
	s.mem -= old
	return true
}

// terminal records a stuck state: some thread unfinished, none enabled.
func (s *search) terminal(st []int32) {
	m := s.m
	var sem, bar, unsat, any bool
	var tasks []int
	_, vals := s.level(s.depth())
	for t := 0; t < m.T; t++ {
		if st[t] >= m.lens[t] {
			continue
		}
		any = true
		if t < m.W && !s.started(st, t) {
			continue
		}
		op := &m.ops[t][st[t]]
		if t >= m.W && s.md.dispatch && st[t] == 0 {
			// An unclaimed dynamic task is stuck at the first operation
			// of its guard that does not hold (docs/SEMANTICS.md,
			// "Dispatch"), not at its first operation.
			for i := range m.guard[t] {
				if !s.holds(vals, &m.ops[t][i]) {
					op = &m.ops[t][i]
					break
				}
			}
		}
		tasks = append(tasks, int(op.Task))
		switch op.Kind {
		case schedule.OpAcquire:
			sem = true
		case schedule.OpAwait:
			bar = true
		case schedule.OpWait:
			if op.Value > m.signals[op.Object] {
				unsat = true
			}
		}
	}
	if !any {
		return
	}
	code := CodeDeadlockCycle
	switch {
	case sem:
		code = CodeDeadlockSemaphore
	case bar:
		code = CodeDeadlockBarrier
	case unsat:
		code = CodeDeadlockUnsatisfiable
	}
	slices.Sort(tasks)
	tasks = slices.Compact(tasks)
	if _, ok := s.out.stuck[code]; !ok {
		tr, ok := s.trace()
		if !ok {
			return
		}
		_, v := s.level(s.depth())
		r := stuckRec{tasks: tasks, trace: tr[:s.depth()], pos: slices.Clone(st[:m.T]), vals: slices.Clone(v)}
		s.out.stuck[code] = r
		if s.out.anyStuck == nil {
			s.out.anyStuck = &r
		}
	}
}

// depth is the number of events on the current path: the level being
// expanded is len(frames) (the root is level 0).
func (s *search) depth() int { return len(s.frames) }
