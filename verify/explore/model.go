package explore

import (
	"fmt"
	"github.com/megaproof/megaproof/schedule"
)

// Access kinds of an operation on a synchronization object, for the
// dependence relation of the partial-order reduction. Two enabled
// operations of different threads are dependent when one releases to an
// object (accAdd) that the other acquires from (accRead), both take tokens
// of one semaphore (accTake), or they compete for the launch's workers: a
// claim of a non-simple dynamic task (accClaim) can leave no worker free
// for another claim, a simple one's (accSimple) included. accEnable
// marks every operation that adds to an object and so may enable a blocked
// one; it creates no dependence by itself (enabling does not break
// commutation).
const (
	accAdd    = 0 // releasing signal, arrive, gpu/sys release
	accRead   = 1 // synchronizing wait (acquire, or relaxed with a later fence), await, gpu/sys acquire
	accTake   = 2 // acquire (takes tokens), or a claim whose guard acquires
	accEnable = 3 // signal, arrive, release; a worker's last operation under residency; what frees a worker
	accClaim  = 4 // claim of a non-simple dynamic task (holds a worker)
	accSimple = 5 // claim of a simple dynamic task
	nAcc      = 6
)

// depMask[k] is the set of access kinds dependent with kind k, as a mask.
var depMask = [nAcc]uint8{
	accAdd:    1 << accRead,
	accRead:   1 << accAdd,
	accTake:   1 << accTake,
	accClaim:  1<<accClaim | 1<<accSimple,
	accSimple: 1 << accClaim,
}

// access is one object an operation touches.
type access struct {
	obj  int32
	kind uint8
}

// readCheck is one read of a scratch or output buffer by a task, with the
// same-buffer writes of other tasks that could initialize it.
// Its ranges are of cells, not bytes (see readCells): the read is [0, n)
// and each writer the cells it covers.
type readCheck struct {
	spans   [][2]int64 // the read's cells
	writers []int32    // candidate writer tasks
	wspans  [][][2]int64
}

// model is the program in the explorer's dense form, shared by every
// exploration of one Run.
type model struct {
	refused string // why a coverage question refused the program, or ""
	p       *schedule.Program
	f       *schedule.Form
	T, W    int // threads, workers
	nc, nb  int
	ns      int
	nSync   int // counters, barriers, semaphores: the objects with release clocks
	nObj    int // nSync, then the pseudo-objects objF and objPool
	objF    int32
	objPool int32 // the workers: claims take them, static threads and non-simple tasks that end free them
	ops     [][]schedule.Op
	lens    []int32
	opBase  []int32 // per thread: global id of its op 0
	opTh    []int32 // per global op id: its thread
	accOff  []int32 // per global op id: start in accs; accOff[id+1] is the end
	accs    []access
	last    [nAcc][]int32 // [kind][obj*T+u]: last position of u with that access to obj, or -1
	signals []uint64      // per counter: init + sum of every signal (saturating)

	// Dynamic tasks (threads W..T-1).
	guard  []int32 // per thread: length of its guard (dynamic threads)
	simple []bool  // per thread: a simple dynamic task
	dyn    int     // dynamic threads

	// Tasks.
	taskThread []int32
	taskBegin  []int32 // op index of Begin in its thread
	taskEnd    []int32 // op index of End in its thread
	conflicts  [][]int32
	reads      [][]readCheck

	// race.scope candidates: per global op id, the ops of other threads on
	// its counter or semaphore such that one of the two modifies it and one
	// is cta-scoped.
	partners [][]int32
	scoped   bool // some op has partners

	// Clocks: a component for thread u is the length of u's prefix known to
	// happen before, which is all the analyses ever ask (is End(a), or a
	// race.scope candidate, in it?).
	clamp         [][]int32 // per thread u: prefix length -> the largest relevant length at most it
	lastCWFence   []int32   // per thread: last position of a cross-worker fence, or -1
	lastRelaxedCW []int32   // per thread: last position of a relaxed cross-worker signal, or -1

	// Residency.
	cap      int
	theta    []int32 // per worker: finished non-empty workers needed before it starts (once no dynamic task is left)
	nonEmpty []bool
}

// maxKey bounds the ints in a state key; larger programs are out of the
// explorer's reach and get an incomplete result.
const maxKey = 1 << 14

// spins reports whether an operation is one a thread can spin in.
func spins(k schedule.OpKind) bool {
	return k == schedule.OpWait || k == schedule.OpAwait || k == schedule.OpAcquire
}

// holdsAt reports whether the condition of operation op holds on its own
// with object values v.
func (m *model) holdsAt(v []uint64, op *schedule.Op) bool {
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

func newModel(p *schedule.Program) *model {
	f := schedule.Lower(p)
	m := &model{p: p, f: f, T: len(f.Threads), W: f.Workers,
		nc: len(p.Counters), nb: len(p.Barriers), ns: len(p.Semaphores)}
	m.nSync = m.nc + m.nb + m.ns
	m.nObj = m.nSync + 2
	m.objF, m.objPool = int32(m.nSync), int32(m.nSync+1)
	m.cap = p.Launch.Capacity()
	T := m.T
	m.ops = make([][]schedule.Op, T)
	m.lens = make([]int32, T)
	m.opBase = make([]int32, T+1)
	for t := range f.Threads {
		m.ops[t] = f.Threads[t].Ops
		m.lens[t] = int32(len(m.ops[t]))
		m.opBase[t+1] = m.opBase[t] + m.lens[t]
	}
	m.opTh = make([]int32, m.opBase[T])
	for t := 0; t < T; t++ {
		for i := m.opBase[t]; i < m.opBase[t+1]; i++ {
			m.opTh[i] = int32(t)
		}
	}
	m.nonEmpty = make([]bool, m.W)
	for w := 0; w < m.W; w++ {
		m.nonEmpty[w] = m.lens[w] > 0
	}
	m.guard = make([]int32, T)
	m.simple = make([]bool, T)
	for t := m.W; t < T; t++ {
		m.dyn++
		ops := m.ops[t]
		g := 0
		for g < len(ops) && (ops[g].Kind == schedule.OpWait || ops[g].Kind == schedule.OpAcquire) {
			g++
		}
		m.guard[t] = int32(g)
		simple := true
		for i, op := range ops {
			if op.Kind == schedule.OpAcquire || i >= g && spins(op.Kind) {
				simple = false
			}
		}
		m.simple[t] = simple
	}
	m.signals = make([]uint64, m.nc)
	for i, c := range p.Counters {
		m.signals[i] = c.Init
	}
	nt := len(p.Tasks)
	m.taskThread = make([]int32, nt)
	m.taskBegin = make([]int32, nt)
	m.taskEnd = make([]int32, nt)
	m.lastCWFence = make([]int32, T)
	m.lastRelaxedCW = make([]int32, T)
	for t := 0; t < T; t++ {
		m.lastCWFence[t], m.lastRelaxedCW[t] = -1, -1
		for i, op := range m.ops[t] {
			switch op.Kind {
			case schedule.OpBegin:
				m.taskThread[op.Task] = int32(t)
				m.taskBegin[op.Task] = int32(i)
			case schedule.OpEnd:
				m.taskEnd[op.Task] = int32(i)
			case schedule.OpFence:
				if op.Scope.CrossWorker() {
					m.lastCWFence[t] = int32(i)
				}
			case schedule.OpSignal:
				if op.Relaxed && op.Scope.CrossWorker() {
					m.lastRelaxedCW[t] = int32(i)
				}
				s := m.signals[op.Object] + op.Value
				if s < op.Value {
					s = ^uint64(0)
				}
				m.signals[op.Object] = s
			}
		}
	}
	m.conflicts = make([][]int32, nt)
	for a := 0; a < nt; a++ {
		for b := a + 1; b < nt; b++ {
			if m.taskThread[a] != m.taskThread[b] && schedule.Conflict(p, a, b) {
				m.conflicts[a] = append(m.conflicts[a], int32(b))
				m.conflicts[b] = append(m.conflicts[b], int32(a))
			}
		}
	}
	m.reads = make([][]readCheck, nt)
	for r := range p.Tasks {
		for _, rd := range p.Tasks[r].Reads {
			k := p.Buffers[rd.Buffer].Kind
			if k != schedule.KindScratch && k != schedule.KindOutput {
				continue
			}
			rc, ok := readCells(p, r, rd)
			if !ok && m.refused == "" {
				m.refused = coverageRefused(fmt.Sprintf("task %q reads of %s writes cover", p.Tasks[r].Name, p.Buffers[rd.Buffer].Name))
			}
			m.reads[r] = append(m.reads[r], rc)
		}
	}
	// A task's End matters only if some race or read check compares it.
	relevant := make([]bool, nt)
	for a := range relevant {
		relevant[a] = len(m.conflicts[a]) > 0
	}
	for r := range m.reads {
		for _, rc := range m.reads[r] {
			for _, w := range rc.writers {
				relevant[w] = true
			}
		}
	}
	m.scopeCandidates()
	// The prefix lengths some comparison asks about: past a relevant End,
	// and past a race.scope candidate.
	m.clamp = make([][]int32, T)
	for t := 0; t < T; t++ {
		c := make([]int32, m.lens[t]+1)
		for i, op := range m.ops[t] {
			c[i+1] = c[i]
			if op.Kind == schedule.OpEnd && relevant[op.Task] || len(m.partners[m.opBase[t]+int32(i)]) > 0 {
				c[i+1] = int32(i + 1)
			}
		}
		m.clamp[t] = c
	}
	return m
}

// scopeCandidates fills m.partners: pairs of operations of different
// threads on one counter or semaphore, one of which modifies it (a signal,
// acquire or release) and one of which is cta-scoped.
func (m *model) scopeCandidates() {
	m.partners = make([][]int32, m.opBase[m.T])
	type use struct {
		id         int32
		mod, local bool
	}
	uses := make([][]use, m.nc+m.ns)
	for t := 0; t < m.T; t++ {
		for i, op := range m.ops[t] {
			var obj int
			switch op.Kind {
			case schedule.OpWait, schedule.OpSignal:
				obj = int(op.Object)
			case schedule.OpAcquire, schedule.OpRelease:
				obj = m.nc + int(op.Object)
			default:
				continue
			}
			uses[obj] = append(uses[obj], use{m.opBase[t] + int32(i), op.Kind != schedule.OpWait, op.Scope == schedule.ScopeCTA})
		}
	}
	for _, us := range uses {
		for i, x := range us {
			for _, y := range us[i+1:] {
				if m.opTh[x.id] != m.opTh[y.id] && (x.mod || y.mod) && (x.local || y.local) {
					m.partners[x.id] = append(m.partners[x.id], y.id)
					m.partners[y.id] = append(m.partners[y.id], x.id)
					m.scoped = true
				}
			}
		}
	}
}

// keyLen is the number of ints in a state key with clocks on or off.
func (m *model) keyLen(hb bool) int {
	if !hb {
		return m.T
	}
	return m.T + m.T*(3*m.T+m.nSync)
}

// mode says which rules of docs/SEMANTICS.md an exploration applies.
type mode struct {
	resid    bool // workers start in index order within capacity (a non-cooperative launch beyond it)
	dispatch bool // dynamic tasks are claimed by free workers once their guard holds
}

// setup builds the residency and dependence tables for one exploration
// mode.
func (m *model) setup(md mode) {
	T := m.T
	m.theta = make([]int32, m.W)
	if md.resid {
		// Once no dynamic task is left (workers then exit as they finish):
		// the workers started once F non-empty workers finished.
		started, empties := 0, 0
		for F := 0; F <= m.W && started < m.W; F++ {
			for started < m.W && started < m.cap+empties+F {
				if !m.nonEmpty[started] {
					empties++
				}
				m.theta[started] = int32(F)
				started++
			}
		}
	}
	anyDyn := m.dyn > 0 && md.dispatch
	m.accOff = make([]int32, m.opBase[T]+1)
	m.accs = m.accs[:0]
	for k := range m.last {
		m.last[k] = make([]int32, m.nObj*T)
		for i := range m.last[k] {
			m.last[k][i] = -1
		}
	}
	add := func(t, i int, obj int32, kind uint8) {
		m.accs = append(m.accs, access{obj, kind})
		m.last[kind][int(obj)*T+t] = int32(i)
	}
	for t := 0; t < T; t++ {
		firstFence := int32(-1)
		for i, op := range m.ops[t] {
			if op.Kind == schedule.OpFence && op.Scope.CrossWorker() {
				firstFence = int32(i)
				break
			}
		}
		n := len(m.ops[t])
		for i, op := range m.ops[t] {
			m.accOff[int(m.opBase[t])+i] = int32(len(m.accs))
			cw := op.Scope.CrossWorker()
			switch op.Kind {
			case schedule.OpWait:
				// A wait synchronizes when it acquires, or when it is
				// relaxed and a fence follows it; otherwise it reads
				// nothing the order of signals could change.
				if cw && (!op.Relaxed || m.lastCWFence[t] > int32(i)) {
					add(t, i, op.Object, accRead)
				}
			case schedule.OpSignal:
				if cw && (!op.Relaxed || firstFence >= 0 && firstFence < int32(i)) {
					add(t, i, op.Object, accAdd)
				}
				add(t, i, op.Object, accEnable)
			case schedule.OpArrive:
				add(t, i, int32(m.nc)+op.Object, accAdd)
				add(t, i, int32(m.nc)+op.Object, accEnable)
			case schedule.OpAwait:
				add(t, i, int32(m.nc)+op.Object, accRead)
			case schedule.OpAcquire:
				add(t, i, int32(m.nc+m.nb)+op.Object, accTake)
				if cw {
					add(t, i, int32(m.nc+m.nb)+op.Object, accRead)
				}
			case schedule.OpRelease:
				if cw {
					add(t, i, int32(m.nc+m.nb)+op.Object, accAdd)
				}
				add(t, i, int32(m.nc+m.nb)+op.Object, accEnable)
			}
			last := i == n-1
			if t < m.W {
				// Residency: a worker's end may start others (once no
				// dynamic task is left).
				if md.resid && last {
					add(t, i, m.objF, accEnable)
				}
				// Dispatch: a finished worker is free for a claim.
				if anyDyn && last {
					add(t, i, m.objPool, accEnable)
				}
				continue
			}
			if !anyDyn {
				continue
			}
			if i == 0 {
				// The claim: it competes for a free worker, and tokens its
				// guard needs can be taken by others.
				if m.simple[t] {
					add(t, i, m.objPool, accSimple)
				} else {
					add(t, i, m.objPool, accClaim)
				}
				for g := int32(1); g < m.guard[t]; g++ {
					if o := m.ops[t][g]; o.Kind == schedule.OpAcquire {
						add(t, i, int32(m.nc+m.nb)+o.Object, accTake)
					}
				}
			}
			if last && !m.simple[t] {
				add(t, i, m.objPool, accEnable)
			}
			if md.resid && last {
				// The last dynamic task's end lets finished workers exit.
				add(t, i, m.objF, accEnable)
			}
		}
	}
	m.accOff[m.opBase[T]] = int32(len(m.accs))
}
