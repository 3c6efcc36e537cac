package explore

import (
	"context"
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// budget is the state budget and context shared by the explorations of one Run.
type budget struct {
	ctx    context.Context
	max    int
	used   int
	hit    bool  // the budget ran out
	ctxErr error // ctx ended
}

func (b *budget) take() bool {
	if b.hit || b.ctxErr != nil {
		return false
	}
	b.used++
	if b.used > b.max {
		b.used = b.max
		b.hit = true
		return false
	}
	if b.used&1023 == 0 {
		if err := b.ctx.Err(); err != nil {
			b.ctxErr = err
			return false
		}
	}
	return true
}

// stuckRec is the first stuck state found for one code.
type stuckRec struct {
	tasks []int
	trace []schedule.Event
}

// found collects what one exploration observed, each with its first trace.
type found struct {
	races     map[[2]int32][]schedule.Event // conflicting pair (lower task first) -> trace
	raceOrder [][2]int32
	uninit    map[int32][]schedule.Event
	overflow  map[int32]stuckRec // counter -> signalling task and trace
	stuck     map[string]stuckRec
	anyStuck  *stuckRec
	begun     []bool // tasks whose Begin was executed
}

// search is one exploration: a depth-first search over the states of the
// program's normal form in one mode.
type search struct {
	m     *model
	hb    bool    // track happens-before clocks; report races and uninitialized reads
	resid bool    // workers are limited by residency
	limit []int32 // per thread: operations it may execute (a frozen thread stops early)
	deadl bool    // report stuck states
	b     *budget
	out   *found

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

	// Visited set: exact keys in an arena, open addressing over their indices.
	wide  bool
	kbuf  []byte
	keys  []byte
	table []int32
	n     int

	enabled []bool
	inSet   []bool
	work    []int32
	cand    []int32
	spanBuf [][2]int64
}

type frame struct{ start, next, end int32 }

func newSearch(m *model, hb, resid bool, limit []int32, b *budget) *search {
	s := &search{m: m, hb: hb, resid: resid, limit: limit, deadl: limit == nil, b: b}
	T := m.T
	if s.limit == nil {
		s.limit = m.lens
	}
	s.klen = m.keyLen(hb)
	s.S = s.klen + 1
	s.V = m.nc + m.nb + m.ns
	if hb {
		s.offVC = T
		s.offR = s.offVC + T*T
		s.offPnd = s.offR + m.nObj*T
		s.offFen = s.offPnd + T*T
	}
	for t := 0; t < T; t++ {
		if m.lens[t] > 250 {
			s.wide = true
		}
	}
	s.out = &found{
		races:    map[[2]int32][]schedule.Event{},
		uninit:   map[int32][]schedule.Event{},
		overflow: map[int32]stuckRec{},
		stuck:    map[string]stuckRec{},
		begun:    make([]bool, len(m.p.Tasks)),
	}
	s.enabled = make([]bool, T)
	s.inSet = make([]bool, T)
	s.table = make([]int32, 1024)
	for i := range s.table {
		s.table[i] = -1
	}
	return s
}

func (s *search) level(d int) ([]int32, []uint64) {
	return s.ints[d*s.S : (d+1)*s.S], s.vals[d*s.V : (d+1)*s.V]
}

func (s *search) grow(d int) {
	for len(s.ints) < (d+1)*s.S {
		s.ints = append(s.ints, make([]int32, s.S)...)
		s.vals = append(s.vals, make([]uint64, s.V)...)
	}
}

// run explores every state reachable from the initial one (up to the
// partial-order reduction) and reports whether it finished.
func (s *search) run() bool {
	m := s.m
	s.grow(0)
	_, v := s.level(0)
	for i, c := range m.p.Counters {
		v[i] = c.Init
	}
	for i, sm := range m.p.Semaphores {
		v[m.nc+m.nb+i] = sm.Tokens
	}
	st, _ := s.level(0)
	s.canon(st)
	s.insert(st[:s.klen])
	if !s.b.take() {
		return false
	}
	s.expand(0)
	for len(s.frames) > 0 {
		d := len(s.frames) - 1
		fr := &s.frames[d]
		if fr.next == fr.end {
			s.succ = s.succ[:fr.start]
			s.frames = s.frames[:d]
			continue
		}
		t := s.succ[fr.next]
		fr.next++
		s.grow(d + 1)
		cur, cv := s.level(d)
		nxt, nv := s.level(d + 1)
		copy(nxt, cur)
		copy(nv, cv)
		s.events = append(s.events[:d], schedule.Event{Thread: t, Step: nxt[t]})
		s.apply(nxt, nv, int(t))
		s.canon(nxt)
		if !s.insert(nxt[:s.klen]) {
			continue
		}
		if !s.b.take() {
			return false
		}
		s.expand(d + 1)
	}
	return true
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

func (s *search) isEnabled(st []int32, v []uint64, t int) bool {
	m := s.m
	p := st[t]
	if p >= s.limit[t] {
		return false
	}
	if s.resid && t < m.W && st[s.S-1] < m.theta[t] {
		return false
	}
	op := &m.ops[t][p]
	switch op.Kind {
	case schedule.OpWait:
		return v[op.Object] >= op.Value
	case schedule.OpAwait:
		return v[m.nc+int(op.Object)] >= op.Value
	case schedule.OpAcquire:
		return v[m.nc+m.nb+int(op.Object)] >= op.Value
	}
	return true
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
		n := s.closure(st, seed, best)
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
func (s *search) closure(st []int32, seed, bound int) int {
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
		var obj int32
		if s.resid && u < m.W && st[s.S-1] < m.theta[u] {
			obj = m.objF
		} else {
			op := &m.ops[u][st[u]]
			switch op.Kind {
			case schedule.OpWait:
				obj = op.Object
			case schedule.OpAwait:
				obj = int32(m.nc) + op.Object
			default:
				obj = int32(m.nc+m.nb) + op.Object
			}
		}
		for w := 0; w < T; w++ {
			if !s.inSet[w] && s.remaining(st, w, obj, 1<<accEnable) {
				add(w)
			}
		}
	}
	if bound > 0 && n >= bound {
		return -1
	}
	return n
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
	op := &m.ops[t][st[t]]
	cw := op.Scope.CrossWorker()
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
				s.out.overflow[op.Object] = stuckRec{tasks: []int{int(op.Task)}, trace: slices.Clone(s.events)}
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
	case schedule.OpEnd:
		if s.hb {
			s.vc(st, t)[t] = m.endRank[op.Task]
		}
	}
	st[t]++
	if s.resid && t < m.W && st[t] == m.lens[t] {
		st[s.S-1]++
	}
}

// checkBegin judges the races and the uninitialized read that task b's
// Begin on thread tb exhibits.
func (s *search) checkBegin(st []int32, tb int, b int32) {
	m := s.m
	c := s.vc(st, tb)
	for _, a := range m.conflicts[b] {
		ta := m.taskThread[a]
		if st[ta] <= m.taskBegin[a] || c[ta] >= m.endRank[a] {
			continue
		}
		key := [2]int32{min(a, b), max(a, b)}
		if _, ok := s.out.races[key]; !ok {
			s.out.races[key] = slices.Clone(s.events)
			s.out.raceOrder = append(s.out.raceOrder, key)
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
			if c[m.taskThread[w]] >= m.endRank[w] {
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
				s.out.uninit[b] = slices.Clone(s.events)
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
	// Clamp every component to the last relevant end it covers; this
	// commutes with joins and keeps every comparison's outcome.
	for i := s.offVC; i < s.klen; i++ {
		u := (i - s.offVC) % T
		st[i] = m.clamp[u][st[i]]
	}
	for obj := 0; obj < m.nObj-1; obj++ {
		used := false
		for u := 0; u < T && !used; u++ {
			used = s.remaining(st, u, int32(obj), 1<<accRead)
		}
		if !used {
			clear(s.rel(st, obj))
		}
	}
}

// insert adds key to the visited set and reports whether it was new.
func (s *search) insert(key []int32) bool {
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
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 29
	kl := len(b)
	mask := uint64(len(s.table) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		j := s.table[i]
		if j < 0 {
			s.table[i] = int32(s.n)
			s.keys = append(s.keys, b...)
			s.n++
			if 2*s.n > len(s.table) {
				s.rehash(kl)
			}
			return true
		}
		if string(s.keys[int(j)*kl:int(j+1)*kl]) == string(b) {
			return false
		}
	}
}

func (s *search) rehash(kl int) {
	t := make([]int32, 2*len(s.table))
	for i := range t {
		t[i] = -1
	}
	mask := uint64(len(t) - 1)
	for j := 0; j < s.n; j++ {
		k := s.keys[j*kl : (j+1)*kl]
		h := uint64(14695981039346656037)
		for _, c := range k {
			h ^= uint64(c)
			h *= 1099511628211
		}
		h ^= h >> 29
		i := h & mask
		for t[i] >= 0 {
			i = (i + 1) & mask
		}
		t[i] = int32(j)
	}
	s.table = t
}

// terminal records a stuck state: some thread unfinished, none enabled.
func (s *search) terminal(st []int32) {
	m := s.m
	var sem, bar, unsat, any bool
	var tasks []int
	for t := 0; t < m.T; t++ {
		if st[t] >= m.lens[t] {
			continue
		}
		any = true
		if s.resid && t < m.W && st[s.S-1] < m.theta[t] {
			continue
		}
		op := &m.ops[t][st[t]]
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
		r := stuckRec{tasks: tasks, trace: slices.Clone(s.events[:s.depth()])}
		s.out.stuck[code] = r
		if s.out.anyStuck == nil {
			s.out.anyStuck = &r
		}
	}
}

// depth is the number of events on the current path: the level being
// expanded is len(frames) (the root is level 0).
func (s *search) depth() int { return len(s.frames) }
