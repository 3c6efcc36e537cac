package schedule

import (
	"fmt"
	"math/bits"
	"slices"
)

// Event is one event of an execution: an ordinary step, thread Thread
// executes its Step-th operation in normal form (see [Lower]), or a macro
// event that a replay expands into ordinary steps: a hold ([Hold]) or an
// advance ([Advance]). Its JSON forms are {"thread":3,"step":5},
// {"hold":3,"at":5} and {"advance":true} (see [Event.MarshalJSON]).
type Event struct {
	Thread int32 `json:"thread"`
	Step   int32 `json:"step"`
}

// State is the state an execution reached. It is produced by [Replay] and
// by [Machine], and answers the questions a witness poses: who is stuck,
// which bodies are in flight, and which events happen before which.
type State struct {
	p    *Program
	form *Form

	Pos        []int32  // per thread: index of the next operation
	Counters   []uint64 // per counter: value (saturating at 2^64-1)
	Overflowed []bool   // per counter: the value went past the counter's width
	Arrivals   []uint64 // per barrier: arrivals so far
	Tokens     []uint64 // per semaphore: tokens held
	Done       []bool   // per task: body completed
	InFlight   []bool   // per task: body begun and not ended
	Started    int      // workers started so far (they start in index order)

	finishedStarted int   // started workers whose thread has finished
	dynLeft         int   // dynamic tasks not yet finished
	holding         int   // claimed, unfinished non-simple dynamic tasks
	guards          []int // per thread: guard length (dynamic threads)
	simple          []bool
	trace           []Event // ordinary steps only: macro events are expanded
	holds           []int32 // per thread: the position it is held before, or -1; nil until the first hold
	nholds          int     // threads held until the next advance
	// happens-before bookkeeping
	lastFence []int32   // per thread: event index of its latest cross-worker fence, or -1
	releases  [][]relEv // per sync object (counters, then barriers, then semaphores)
	observed  []int32   // per event: for an acquire point, how many releases of its object it saw
	begin     []int32   // per task: event index of its Begin, or -1
	end       []int32   // per task: event index of its End, or -1
}

type relEv struct {
	at int32 // event index of the releasing operation
	rp int32 // event index of its release point (itself or an earlier fence)
}

// Machine executes a program step by step from its initial state. It is the
// executable semantics that judges witnesses; analyses never share it.
type Machine struct{ State }

// NewMachine returns a machine at the initial state of a program, or the
// validation error of an invalid one (a *[Error]; nil is invalid too).
func NewMachine(p *Program) (*Machine, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return newMachine(p), nil
}

func newMachine(p *Program) *Machine {
	f := Lower(p)
	// The fixed-size lists share three slabs, as a clone's do.
	nth, nt, nc := len(f.Threads), len(p.Tasks), len(p.Counters)
	ints := make([]int32, 2*nth+2*nt)
	words := make([]uint64, nc+len(p.Barriers)+len(p.Semaphores))
	flags := make([]bool, nc+2*nt+nth)
	m := &Machine{State{
		p:          p,
		form:       f,
		Pos:        carve(&ints, nth),
		Counters:   carve(&words, nc),
		Overflowed: carve(&flags, nc),
		Arrivals:   carve(&words, len(p.Barriers)),
		Tokens:     carve(&words, len(p.Semaphores)),
		Done:       carve(&flags, nt),
		InFlight:   carve(&flags, nt),
		lastFence:  carve(&ints, nth),
		releases:   make([][]relEv, len(p.Counters)+len(p.Barriers)+len(p.Semaphores)),
		begin:      carve(&ints, nt),
		end:        carve(&ints, nt),
	}}
	for i, c := range p.Counters {
		m.Counters[i] = c.Init
	}
	for i, s := range p.Semaphores {
		m.Tokens[i] = s.Tokens
	}
	for i := range m.lastFence {
		m.lastFence[i] = -1
	}
	for i := range m.begin {
		m.begin[i], m.end[i] = -1, -1
	}
	m.guards = make([]int, len(f.Threads))
	m.simple = carve(&flags, nth)
	for th := f.Workers; th < len(f.Threads); th++ {
		t := &f.Threads[th]
		m.guards[th], m.simple[th] = t.Guard(), t.Simple()
		if len(t.Ops) > 0 {
			m.dynLeft++
		}
	}
	m.startWorkers()
	return m
}

// Guard is the length of a thread's guard: the longest prefix of its
// operations that are waits or acquires. A dynamic task is claimed only
// once each of them holds (docs/SEMANTICS.md, "Dispatch").
func (t *Thread) Guard() int {
	g := 0
	for g < len(t.Ops) && (t.Ops[g].Kind == OpWait || t.Ops[g].Kind == OpAcquire) {
		g++
	}
	return g
}

// Simple reports whether a dynamic task cannot block once claimed: its
// guard holds only counter waits and no wait, await or acquire follows it.
// A simple task holds no worker; any other holds the one that claims it
// until it ends.
func (t *Thread) Simple() bool {
	g := t.Guard()
	for i, op := range t.Ops {
		switch op.Kind {
		case OpAcquire:
			return false
		case OpWait, OpAwait:
			if i >= g {
				return false
			}
		}
	}
	return true
}

// Clone returns an independent copy of the machine: stepping one leaves
// the other where it was (for searches that branch).
func (m *Machine) Clone() *Machine {
	c := &Machine{m.State}
	s := &c.State
	// The fixed-size lists, never nil, are copied into three slabs; the
	// observed counts, which grow with every step, end the first one with
	// room for a few before their first reallocation (nothing follows
	// them in it).
	ints := make([]int32, 0, len(m.Pos)+len(m.lastFence)+len(m.begin)+len(m.end)+len(m.observed)+cloneRoom)
	s.Pos, ints = cloneInto(ints, m.Pos)
	s.lastFence, ints = cloneInto(ints, m.lastFence)
	s.begin, ints = cloneInto(ints, m.begin)
	s.end, ints = cloneInto(ints, m.end)
	s.observed = append(ints[:0], m.observed...)
	words := make([]uint64, 0, len(m.Counters)+len(m.Arrivals)+len(m.Tokens))
	s.Counters, words = cloneInto(words, m.Counters)
	s.Arrivals, words = cloneInto(words, m.Arrivals)
	s.Tokens, _ = cloneInto(words, m.Tokens)
	flags := make([]bool, 0, len(m.Overflowed)+len(m.Done)+len(m.InFlight))
	s.Overflowed, flags = cloneInto(flags, m.Overflowed)
	s.Done, flags = cloneInto(flags, m.Done)
	s.InFlight, _ = cloneInto(flags, m.InFlight)
	// The event lists grow with every step: the clone has room for a few
	// before its first reallocation.
	s.trace = append(make([]Event, 0, len(m.trace)+cloneRoom), m.trace...)
	s.releases = make([][]relEv, len(m.releases))
	n := 0
	for _, r := range m.releases {
		n += len(r)
	}
	if n > 0 {
		// One slab for every object's releases, each capped at its
		// length: a later append to one moves it out.
		rels := make([]relEv, 0, n)
		for i, r := range m.releases {
			if r != nil {
				s.releases[i], rels = cloneInto(rels, r)
			}
		}
	} else {
		for i, r := range m.releases {
			s.releases[i] = slices.Clone(r)
		}
	}
	if m.holds != nil {
		s.holds = slices.Clone(m.holds)
	}
	return c
}

// carve cuts the first n elements off *slab, capped at n.
func carve[T any](slab *[]T, n int) []T {
	c := (*slab)[:n:n]
	*slab = (*slab)[n:]
	return c
}

// cloneRoom is the room for events a clone's lists get.
const cloneRoom = 8

// cloneInto appends src to slab and returns the copy, capped at its
// length, and the rest of slab.
func cloneInto[T any](slab, src []T) (clone, rest []T) {
	n := len(slab)
	slab = append(slab, src...)
	return slab[n:len(slab):len(slab)], slab[len(slab):]
}

// Key identifies the state up to everything its future and its
// happens-before relation can depend on: every thread's position, the
// releasing events of every sync object in order, and how many of them
// each executed acquire observed. Two executions with equal keys reach the
// same state with the same happens-before among their events (up to the
// order of independent events), so a search may merge them.
func (s *State) Key() string {
	b := make([]byte, 0, 8*len(s.Pos)+8*len(s.trace))
	put := func(v int32) { b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24)) }
	ev := func(at int32) {
		if at < 0 {
			put(-1)
			put(-1)
			return
		}
		put(s.trace[at].Thread)
		put(s.trace[at].Step)
	}
	for _, p := range s.Pos {
		put(p)
	}
	for _, rs := range s.releases {
		put(int32(len(rs)))
		for _, r := range rs {
			ev(r.at)
			ev(r.rp)
		}
	}
	// Observations in (thread, step) order: per thread, in program order.
	byThread := make([][]int32, len(s.form.Threads))
	for i, e := range s.trace {
		byThread[e.Thread] = append(byThread[e.Thread], int32(i))
	}
	for _, evs := range byThread {
		for _, i := range evs {
			put(s.observed[i])
		}
	}
	return string(b)
}

// Form is the normal form the state's events refer to.
func (s *State) Form() *Form { return s.form }

// Program is the program the state is a state of.
func (s *State) Program() *Program { return s.p }

// Trace is the sequence of events executed so far.
func (s *State) Trace() []Event { return s.trace }

func (s *State) capacity() int {
	if s.p.Launch.Cooperative {
		return s.form.Workers
	}
	return s.p.Launch.Capacity()
}

// exited is the number of workers that have left their residency slot: a
// worker exits once its thread has finished and every dynamic task has
// ended.
func (s *State) exited() int {
	if s.dynLeft > 0 {
		return 0
	}
	return s.finishedStarted
}

// startWorkers starts workers in index order while resident slots are free.
func (s *State) startWorkers() {
	for s.Started < s.form.Workers && s.Started < s.capacity()+s.exited() {
		if len(s.form.Threads[s.Started].Ops) == 0 {
			s.finishedStarted++
		}
		s.Started++
	}
}

// guardHolds reports whether each operation of dynamic thread th's guard
// holds on its own.
func (s *State) guardHolds(th int) bool {
	for _, op := range s.form.Threads[th].Ops[:s.guards[th]] {
		switch op.Kind {
		case OpWait:
			if s.Counters[op.Object] < op.Value {
				return false
			}
		case OpAcquire:
			if s.Tokens[op.Object] < op.Value {
				return false
			}
		}
	}
	return true
}

// workerFree reports whether a worker is free to claim dynamic thread th:
// a resident worker whose thread has finished and that holds no task, or,
// for a simple task, any resident worker that holds no task.
func (s *State) workerFree(th int) bool {
	if s.simple[th] {
		return s.Started-s.exited()-s.holding >= 1
	}
	return s.finishedStarted-s.exited()-s.holding >= 1
}

// Finished reports whether thread th has executed all its operations.
func (s *State) Finished(th int) bool { return int(s.Pos[th]) == len(s.form.Threads[th].Ops) }

// Enabled returns nil if thread th can execute its next operation now, or
// an error saying why not.
func (s *State) Enabled(th int) error {
	if th < 0 || th >= len(s.form.Threads) {
		return fmt.Errorf("no thread %d (have %d)", th, len(s.form.Threads))
	}
	if s.Finished(th) {
		return fmt.Errorf("%s has finished", s.form.ThreadName(s.p, th))
	}
	switch b := s.blocked(th); b.kind {
	case blockFinished:
		return fmt.Errorf("%s has finished", s.form.ThreadName(s.p, th))
	case blockResident:
		return fmt.Errorf("worker %d is not resident: %d of %d slots are held by workers that have not exited", th, s.Started-s.exited(), s.capacity())
	case blockFree:
		return fmt.Errorf("%s cannot be claimed: no worker is free (%d finished, %d held by dynamic tasks)", s.form.ThreadName(s.p, th), s.finishedStarted-s.exited(), s.holding)
	case blockObject:
		if b.guard {
			return fmt.Errorf("%s cannot be claimed: its guard does not hold", s.form.ThreadName(s.p, th))
		}
		op := b.op
		switch op.Kind {
		case OpWait:
			return fmt.Errorf("%s: counter %s is %d, below %d", s.form.ThreadName(s.p, th), s.p.Counters[op.Object].Name, s.Counters[op.Object], op.Value)
		case OpAwait:
			return fmt.Errorf("%s: barrier %s has %d arrivals, below %d", s.form.ThreadName(s.p, th), s.p.Barriers[op.Object].Name, s.Arrivals[op.Object], op.Value)
		default:
			return fmt.Errorf("%s: semaphore %s holds %d tokens, below %d", s.form.ThreadName(s.p, th), s.p.Semaphores[op.Object].Name, s.Tokens[op.Object], op.Value)
		}
	}
	return nil
}

// Stuck reports whether some thread has not finished and none can move:
// a deadlock.
func (s *State) Stuck() bool {
	unfinished := false
	for th := range s.form.Threads {
		switch s.blocked(th).kind {
		case blockFinished:
			continue
		case canMove:
			return false
		}
		unfinished = true
	}
	return unfinished
}

// AllFinished reports whether every thread has finished.
func (s *State) AllFinished() bool {
	for th := range s.form.Threads {
		if !s.Finished(th) {
			return false
		}
	}
	return true
}

// Step executes one event, or returns an error saying why it cannot:
// an ordinary step that is not enabled or that a hold forbids, a hold
// that is out of range or a second hold of a thread before one advance,
// or a malformed event. An advance always executes (see [Advance]).
func (m *Machine) Step(ev Event) error {
	switch {
	case ev.IsHold():
		return m.hold(ev)
	case ev.IsAdvance():
		m.Advance()
		return nil
	case !ev.valid():
		return fmt.Errorf("not an event: %s", ev.text())
	}
	th := int(ev.Thread)
	if err := m.Enabled(th); err != nil {
		return err
	}
	if ev.Step != m.Pos[th] {
		return fmt.Errorf("%s is at step %d, not %d", m.form.ThreadName(m.p, th), m.Pos[th], ev.Step)
	}
	if m.heldAt(th) {
		return fmt.Errorf("%s is held before step %d until the next advance", m.form.ThreadName(m.p, th), m.holds[th])
	}
	m.exec(th)
	return nil
}

// exec executes thread th's next operation, which is enabled.
func (m *Machine) exec(th int) {
	ev := Event{Thread: int32(th), Step: m.Pos[th]}
	op := m.form.Threads[th].Ops[ev.Step]
	at := int32(len(m.trace))
	m.trace = append(m.trace, ev)
	m.observed = append(m.observed, 0)
	nc, nb := len(m.p.Counters), len(m.p.Barriers)
	switch op.Kind {
	case OpWait:
		m.observed[at] = int32(len(m.releases[op.Object]))
	case OpSignal:
		v, carry := bits.Add64(m.Counters[op.Object], op.Value, 0)
		if carry != 0 {
			v = ^uint64(0)
		}
		m.Counters[op.Object] = v
		if v > m.p.Counters[op.Object].Max() || carry != 0 {
			m.Overflowed[op.Object] = true
		}
		if op.Scope.CrossWorker() {
			rp := at
			if op.Relaxed {
				rp = m.lastFence[th]
			}
			if rp >= 0 {
				m.releases[op.Object] = append(m.releases[op.Object], relEv{at, rp})
			}
		}
	case OpArrive:
		m.Arrivals[op.Object]++
		m.releases[nc+int(op.Object)] = append(m.releases[nc+int(op.Object)], relEv{at, at})
	case OpAwait:
		m.observed[at] = int32(len(m.releases[nc+int(op.Object)]))
	case OpAcquire:
		m.Tokens[op.Object] -= op.Value
		m.observed[at] = int32(len(m.releases[nc+nb+int(op.Object)]))
	case OpRelease:
		m.Tokens[op.Object] += op.Value
		if op.Scope.CrossWorker() {
			m.releases[nc+nb+int(op.Object)] = append(m.releases[nc+nb+int(op.Object)], relEv{at, at})
		}
	case OpFence:
		if op.Scope.CrossWorker() {
			m.lastFence[th] = at
		}
	case OpBegin:
		m.InFlight[op.Task] = true
		m.begin[op.Task] = at
	case OpEnd:
		m.InFlight[op.Task] = false
		m.Done[op.Task] = true
		m.end[op.Task] = at
	}
	m.Pos[th]++
	if th >= m.form.Workers && !m.simple[th] && ev.Step == 0 {
		m.holding++
	}
	switch {
	case !m.Finished(th):
	case th < m.form.Workers:
		m.finishedStarted++
		m.startWorkers()
	default:
		if !m.simple[th] {
			m.holding--
		}
		m.dynLeft--
		m.startWorkers()
	}
}

// Replay executes trace from the initial state of a program and returns
// the state it reaches, expanding holds and advances (see [Advance]) into
// the ordinary steps they stand for: the state's [State.Trace] holds
// those. It refuses, with the event's index and the reason, any event that
// cannot execute when it comes ([Machine.Step]) and a hold that no
// advance follows, and an invalid (or nil) program with its validation
// error, returning no state.
func Replay(p *Program, trace []Event) (*State, error) {
	m, err := NewMachine(p)
	if err != nil {
		return nil, err
	}
	lastHold := -1
	for i, ev := range trace {
		if err := m.Step(ev); err != nil {
			return &m.State, fmt.Errorf("event %d (%s): %w", i, ev.text(), err)
		}
		switch {
		case ev.IsHold():
			lastHold = i
		case ev.IsAdvance():
			lastHold = -1
		}
	}
	if lastHold >= 0 {
		return &m.State, fmt.Errorf("event %d (%s): no advance follows the hold", lastHold, trace[lastHold].text())
	}
	return &m.State, nil
}

// BodyEvents returns the indices in the trace of a task's Begin and End
// events, or -1 for those not executed.
func (s *State) BodyEvents(task int) (begin, end int) {
	return int(s.begin[task]), int(s.end[task])
}

// HappensBefore reports whether event a happens before event b in the
// execution so far: a chain of program order and synchronizes-with edges
// (release or fence-then-relaxed signal read by an acquire or
// relaxed-then-fence wait, both at a scope that spans workers; barrier
// arrivals read by awaits; semaphore releases read by acquires) leads from a
// to b. Atomic adds continue release sequences, so an acquire synchronizes
// with every release on its object that precedes it.
func (s *State) HappensBefore(a, b int) bool {
	if a < 0 || b < 0 || a >= len(s.trace) || b >= len(s.trace) || a >= b {
		return false
	}
	return s.Past(b)(a)
}

// Past returns a predicate reporting, for an event index a, whether a
// happens before event b. It computes b's causal past once, so many
// questions about one b cost one pass over the trace.
func (s *State) Past(b int) func(a int) bool {
	if b < 0 || b >= len(s.trace) {
		return func(int) bool { return false }
	}
	// Per-thread list of event indices in program order.
	byThread := make([][]int32, len(s.form.Threads))
	idx := make([]int32, len(s.trace)) // position of each event in its thread's list
	for i, ev := range s.trace {
		idx[i] = int32(len(byThread[ev.Thread]))
		byThread[ev.Thread] = append(byThread[ev.Thread], int32(i))
	}
	// Backward search from b: for each thread, the highest program-order
	// position reached; everything before it in that thread is reached too.
	reach := make([]int32, len(s.form.Threads))
	for i := range reach {
		reach[i] = -1
	}
	seen := make([]int32, len(s.releases)) // per object: releases already followed
	nc, nb := int32(len(s.p.Counters)), int32(len(s.p.Barriers))
	var work []int32
	visit := func(e int32) {
		th := s.trace[e].Thread
		if idx[e] > reach[th] {
			reach[th] = idx[e]
			work = append(work, th)
		}
	}
	follow := func(obj int32, upto int32) {
		for ; seen[obj] < upto; seen[obj]++ {
			visit(s.releases[obj][seen[obj]].rp)
		}
	}
	visit(int32(b))
	done := make([]int32, len(s.form.Threads)) // per thread: positions [0, done) expanded
	for len(work) > 0 {
		th := work[len(work)-1]
		work = work[:len(work)-1]
		for ; done[th] <= reach[th]; done[th]++ {
			e := byThread[th][done[th]]
			op := s.form.Threads[th].Ops[s.trace[e].Step]
			switch op.Kind {
			case OpWait:
				if !op.Relaxed && op.Scope.CrossWorker() {
					follow(op.Object, s.observed[e])
				}
			case OpAwait:
				follow(nc+op.Object, s.observed[e])
			case OpAcquire:
				if op.Scope.CrossWorker() {
					follow(nc+nb+op.Object, s.observed[e])
				}
			case OpFence:
				if op.Scope.CrossWorker() {
					// An acquire fence completes every earlier relaxed wait of its thread.
					for k := int32(0); k < done[th]; k++ {
						pe := byThread[th][k]
						pop := s.form.Threads[th].Ops[s.trace[pe].Step]
						if pop.Kind == OpWait && pop.Relaxed && pop.Scope.CrossWorker() {
							follow(pop.Object, s.observed[pe])
						}
					}
				}
			}
		}
	}
	return func(a int) bool {
		if a < 0 || a >= b {
			return false
		}
		return reach[s.trace[a].Thread] >= idx[a]
	}
}
