package explore

import (
	"github.com/megaproof/megaproof/schedule"
)

// Access kinds of an operation on a synchronization object, for the
// dependence relation of the partial-order reduction. Two enabled
// operations of different threads are dependent when one releases to an
// object (accAdd) that the other acquires from (accRead), or both take
// tokens of one semaphore (accTake). accEnable marks every operation that
// adds to an object and so may enable a blocked one; it creates no
// dependence by itself (enabling does not break commutation).
const (
	accAdd    = 0 // releasing signal, arrive, gpu/sys release
	accRead   = 1 // synchronizing wait (acquire, or relaxed with a later fence), await, gpu/sys acquire
	accTake   = 2 // acquire (takes tokens)
	accEnable = 3 // signal, arrive, release, a worker's last operation under residency
	nAcc      = 4
)

// depMask[k] is the set of access kinds dependent with kind k, as a mask.
var depMask = [nAcc]uint8{
	accAdd:  1 << accRead,
	accRead: 1 << accAdd,
	accTake: 1 << accTake,
}

// access is one object an operation touches.
type access struct {
	obj  int32
	kind uint8
}

// readCheck is one read of a scratch or output buffer by a task, with the
// same-buffer writes of other tasks that could initialize it.
type readCheck struct {
	spans   [][2]int64 // the read's byte ranges in its buffer
	writers []int32    // candidate writer tasks
	wspans  [][][2]int64
}

// model is the program in the explorer's dense form, shared by every
// exploration of one Run.
type model struct {
	p       *schedule.Program
	f       *schedule.Form
	T, W    int // threads, workers
	nc, nb  int
	ns      int
	nObj    int // counters, barriers, semaphores, then the residency object F
	objF    int32
	ops     [][]schedule.Op
	lens    []int32
	opBase  []int32 // per thread: global id of its op 0
	accOff  []int32 // per global op id: start in accs; accOff[id+1] is the end
	accs    []access
	last    [nAcc][]int32 // [kind][obj*T+u]: last position of u with that access to obj, or -1
	signals []uint64      // per counter: init + sum of every signal (saturating)

	// Tasks.
	taskThread []int32
	taskBegin  []int32 // op index of Begin in its thread
	taskEnd    []int32 // op index of End in its thread
	endRank    []int32 // 1 + the task's index among its thread's tasks
	conflicts  [][]int32
	reads      [][]readCheck

	// Clocks: a component is the number of the other thread's task ends
	// known to happen before, which is all the analyses ever ask.
	clamp         [][]int32 // per thread u: ends count -> the largest count of a relevant end at most it
	lastCWFence   []int32   // per thread: last position of a cross-worker fence, or -1
	lastRelaxedCW []int32   // per thread: last position of a relaxed cross-worker signal, or -1

	// Residency.
	cap      int
	theta    []int32 // per worker: finished non-empty workers needed before it starts
	nonEmpty []bool
}

// maxKey bounds the ints in a state key; larger programs are out of the
// explorer's reach and get an incomplete result.
const maxKey = 1 << 14

func newModel(p *schedule.Program) *model {
	f := schedule.Lower(p)
	m := &model{p: p, f: f, T: len(f.Threads), W: f.Workers,
		nc: len(p.Counters), nb: len(p.Barriers), ns: len(p.Semaphores)}
	m.nObj = m.nc + m.nb + m.ns + 1
	m.objF = int32(m.nObj - 1)
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
	m.nonEmpty = make([]bool, m.W)
	for w := 0; w < m.W; w++ {
		m.nonEmpty[w] = m.lens[w] > 0
	}
	m.signals = make([]uint64, m.nc)
	for i, c := range p.Counters {
		m.signals[i] = c.Init
	}
	nt := len(p.Tasks)
	m.taskThread = make([]int32, nt)
	m.taskBegin = make([]int32, nt)
	m.taskEnd = make([]int32, nt)
	m.endRank = make([]int32, nt)
	m.lastCWFence = make([]int32, T)
	m.lastRelaxedCW = make([]int32, T)
	for t := 0; t < T; t++ {
		m.lastCWFence[t], m.lastRelaxedCW[t] = -1, -1
		rank := int32(0)
		for i, op := range m.ops[t] {
			switch op.Kind {
			case schedule.OpBegin:
				m.taskThread[op.Task] = int32(t)
				m.taskBegin[op.Task] = int32(i)
			case schedule.OpEnd:
				rank++
				m.taskEnd[op.Task] = int32(i)
				m.endRank[op.Task] = rank
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
			rc := readCheck{spans: spansOf(rd)}
			for w := range p.Tasks {
				if w == r {
					continue
				}
				var ws [][2]int64
				for _, wr := range p.Tasks[w].Writes {
					if wr.Buffer == rd.Buffer {
						ws = append(ws, spansOf(wr)...)
					}
				}
				if len(ws) > 0 {
					rc.writers = append(rc.writers, int32(w))
					rc.wspans = append(rc.wspans, ws)
				}
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
	m.clamp = make([][]int32, T)
	for t := 0; t < T; t++ {
		c := []int32{0}
		for _, op := range m.ops[t] {
			if op.Kind == schedule.OpEnd {
				k := c[len(c)-1]
				if relevant[op.Task] {
					k = m.endRank[op.Task]
				}
				c = append(c, k)
			}
		}
		m.clamp[t] = c
	}
	return m
}

// keyLen is the number of ints in a state key with clocks on or off.
func (m *model) keyLen(hb bool) int {
	if !hb {
		return m.T
	}
	return m.T + m.T*(3*m.T+m.nObj)
}

// setup builds the dependence tables for one exploration mode.
func (m *model) setup(resid bool) {
	T := m.T
	m.theta = make([]int32, m.W)
	if resid {
		// Started(F): workers started once F non-empty workers finished.
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
			if resid && t < m.W && i == len(m.ops[t])-1 {
				add(t, i, m.objF, accEnable)
			}
		}
	}
	m.accOff[m.opBase[T]] = int32(len(m.accs))
}

func spansOf(a schedule.Access) [][2]int64 {
	var s [][2]int64
	for lo, hi := range a.Spans() {
		s = append(s, [2]int64{lo, hi})
	}
	return s
}
