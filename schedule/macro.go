package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Macro events. A witness may hold, besides ordinary steps, two events
// that a replay expands into ordinary steps deterministically (see
// docs/SEMANTICS.md, "Compact witnesses"):
//
//   - Hold(t, p): thread t may not execute its operation at position p or
//     later until the next Advance (p is at least its current position and
//     at most its length; a thread is held at most once per advance).
//   - Advance(): run every thread greedily until no thread can move. The
//     lowest-numbered thread that can move (not finished, not at its hold,
//     its next operation enabled) executes operations until it cannot;
//     then again the lowest-numbered thread that can move, until none can.
//     The holds are then cleared. An advance that executes nothing is
//     valid.
//
// In Go a hold is Event{Thread: t, Step: -1-p} and an advance is
// Event{Thread: -1, Step: 0}; every other event with a negative field is
// malformed. In JSON an ordinary event is {"thread":3,"step":5}, a hold
// {"hold":3,"at":5} and an advance {"advance":true}.

// Hold returns the event that holds thread t before its operation at
// position p during the next advance.
func Hold(t, p int) Event { return Event{Thread: int32(t), Step: -1 - int32(p)} }

// Advance returns the event that runs every thread greedily until none
// can move (see [Hold] for what stops a thread).
func Advance() Event { return Event{Thread: -1} }

// IsStep reports whether e is an ordinary step: thread Thread executes its
// Step-th operation.
func (e Event) IsStep() bool { return e.Thread >= 0 && e.Step >= 0 }

// IsHold reports whether e is a hold (see [Hold]); [Event.HoldAt] is its
// position.
func (e Event) IsHold() bool { return e.Thread >= 0 && e.Step < 0 }

// IsAdvance reports whether e is an advance (see [Advance]).
func (e Event) IsAdvance() bool { return e.Thread == -1 && e.Step == 0 }

// HoldAt is the position a hold holds its thread before (meaningful only
// when [Event.IsHold]).
func (e Event) HoldAt() int { return -1 - int(e.Step) }

// valid reports whether e is one of the three forms.
func (e Event) valid() bool { return e.Thread >= 0 || e.IsAdvance() }

// text renders the event for messages.
func (e Event) text() string {
	switch {
	case e.IsStep():
		return fmt.Sprintf("thread %d, step %d", e.Thread, e.Step)
	case e.IsHold():
		return fmt.Sprintf("hold thread %d at step %d", e.Thread, e.HoldAt())
	case e.IsAdvance():
		return "advance"
	}
	return fmt.Sprintf("malformed event {thread %d, step %d}", e.Thread, e.Step)
}

// MarshalJSON writes the event's JSON form: {"thread":T,"step":S},
// {"hold":T,"at":P} or {"advance":true}. A malformed event is an error.
func (e Event) MarshalJSON() ([]byte, error) {
	switch {
	case e.IsStep():
		return fmt.Appendf(nil, `{"thread":%d,"step":%d}`, e.Thread, e.Step), nil
	case e.IsHold():
		return fmt.Appendf(nil, `{"hold":%d,"at":%d}`, e.Thread, e.HoldAt()), nil
	case e.IsAdvance():
		return []byte(`{"advance":true}`), nil
	}
	return nil, fmt.Errorf("schedule: %s", e.text())
}

// UnmarshalJSON reads one of the three JSON forms of [Event.MarshalJSON],
// strictly: an object with exactly the keys of one form, integers from 0
// to 2^31-2, and "advance" true. Anything else is an error saying what is
// wrong.
func (e *Event) UnmarshalJSON(data []byte) error {
	var raw struct {
		Thread  *int64 `json:"thread"`
		Step    *int64 `json:"step"`
		Hold    *int64 `json:"hold"`
		At      *int64 `json:"at"`
		Advance *bool  `json:"advance"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return errors.New("event: null is not an event")
	}
	if err := dec.Decode(&raw); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field == "advance" {
			return errors.New(`event: "advance" is not a boolean`)
		}
		if errors.As(err, &ute) && ute.Field != "" {
			return fmt.Errorf("event: %q is not an integer", ute.Field)
		}
		return fmt.Errorf("event: %v", err)
	}
	num := func(name string, v *int64) (int32, error) {
		if *v < 0 {
			return 0, fmt.Errorf("event: %q is negative (%d)", name, *v)
		}
		if *v >= math.MaxInt32 {
			return 0, fmt.Errorf("event: %q is too large (%d)", name, *v)
		}
		return int32(*v), nil
	}
	step, hold, adv := raw.Thread != nil || raw.Step != nil, raw.Hold != nil || raw.At != nil, raw.Advance != nil
	switch {
	case step && !hold && !adv:
		if raw.Thread == nil || raw.Step == nil {
			return errors.New(`event: a step has both "thread" and "step"`)
		}
		t, err := num("thread", raw.Thread)
		if err != nil {
			return err
		}
		s, err := num("step", raw.Step)
		if err != nil {
			return err
		}
		*e = Event{Thread: t, Step: s}
	case hold && !step && !adv:
		if raw.Hold == nil || raw.At == nil {
			return errors.New(`event: a hold has both "hold" and "at"`)
		}
		t, err := num("hold", raw.Hold)
		if err != nil {
			return err
		}
		p, err := num("at", raw.At)
		if err != nil {
			return err
		}
		*e = Hold(int(t), int(p))
	case adv && !step && !hold:
		if !*raw.Advance {
			return errors.New(`event: "advance" must be true`)
		}
		*e = Advance()
	case !step && !hold && !adv:
		return errors.New(`event: no "thread" and "step", "hold" and "at", or "advance"`)
	default:
		return errors.New(`event: mixes the keys of a step ("thread", "step"), a hold ("hold", "at") and an advance ("advance")`)
	}
	return nil
}

// Expands reports whether a trace holds a macro event (a hold or an
// advance).
func Expands(trace []Event) bool {
	for _, e := range trace {
		if !e.IsStep() {
			return true
		}
	}
	return false
}

// blockKind says why a thread cannot move.
type blockKind uint8

const (
	canMove       blockKind = iota
	blockFinished           // every operation executed
	blockResident           // a worker that is not resident yet
	blockObject             // an operation (or guard operation) needs a sync object's value
	blockFree               // a dynamic task whose guard holds, with no worker free to claim it
)

// block is why a thread cannot move: for blockObject, the sync object
// (counters, then barriers, then semaphores, as State.releases) and the
// value it needs, and whether the operation is one of a dynamic task's
// guard before its claim.
type block struct {
	kind  blockKind
	guard bool
	obj   int32
	need  uint64
	op    Op
}

// blocked says whether, and why not, thread th can execute its next
// operation now; [State.Enabled] words it.
func (s *State) blocked(th int) block {
	if s.Finished(th) {
		return block{kind: blockFinished}
	}
	if th < s.form.Workers && th >= s.Started {
		return block{kind: blockResident}
	}
	nc, nb := int32(len(s.p.Counters)), int32(len(s.p.Barriers))
	ops := s.form.Threads[th].Ops
	if th >= s.form.Workers && s.Pos[th] == 0 {
		for _, op := range ops[:s.guards[th]] {
			switch op.Kind {
			case OpWait:
				if s.Counters[op.Object] < op.Value {
					return block{kind: blockObject, guard: true, obj: op.Object, need: op.Value, op: op}
				}
			case OpAcquire:
				if s.Tokens[op.Object] < op.Value {
					return block{kind: blockObject, guard: true, obj: nc + nb + op.Object, need: op.Value, op: op}
				}
			}
		}
		if !s.workerFree(th) {
			return block{kind: blockFree}
		}
	}
	op := ops[s.Pos[th]]
	switch op.Kind {
	case OpWait:
		if s.Counters[op.Object] < op.Value {
			return block{kind: blockObject, obj: op.Object, need: op.Value, op: op}
		}
	case OpAwait:
		if s.Arrivals[op.Object] < op.Value {
			return block{kind: blockObject, obj: nc + op.Object, need: op.Value, op: op}
		}
	case OpAcquire:
		if s.Tokens[op.Object] < op.Value {
			return block{kind: blockObject, obj: nc + nb + op.Object, need: op.Value, op: op}
		}
	}
	return block{}
}

// objectValue is the value of sync object obj (numbered as in block).
func (s *State) objectValue(obj int32) uint64 {
	nc, nb := int32(len(s.Counters)), int32(len(s.Arrivals))
	switch {
	case obj < nc:
		return s.Counters[obj]
	case obj < nc+nb:
		return s.Arrivals[obj-nc]
	}
	return s.Tokens[obj-nc-nb]
}

// heldAt reports whether thread th stands at or past its hold.
func (s *State) heldAt(th int) bool {
	return s.holds != nil && s.holds[th] >= 0 && s.Pos[th] >= s.holds[th]
}

// Held is the position thread th is held before until the next advance,
// or -1 when it is not held.
func (s *State) Held(th int) int {
	if s.holds == nil || th < 0 || th >= len(s.holds) {
		return -1
	}
	return int(s.holds[th])
}

// HoldsPending reports how many threads are held, waiting for an advance.
func (s *State) HoldsPending() int { return s.nholds }

// hold executes a hold event.
func (m *Machine) hold(ev Event) error {
	th, at := int(ev.Thread), ev.HoldAt()
	if th >= len(m.form.Threads) {
		return fmt.Errorf("no thread %d (have %d)", th, len(m.form.Threads))
	}
	name := m.form.ThreadName(m.p, th)
	if n := len(m.form.Threads[th].Ops); at > n {
		return fmt.Errorf("%s has %d steps: it cannot be held before step %d", name, n, at)
	}
	if at < int(m.Pos[th]) {
		return fmt.Errorf("%s is at step %d, past step %d it would be held before", name, m.Pos[th], at)
	}
	if m.holds == nil {
		m.holds = make([]int32, len(m.form.Threads))
		for i := range m.holds {
			m.holds[i] = -1
		}
	}
	if m.holds[th] >= 0 {
		return fmt.Errorf("%s is held already (before step %d) in this advance", name, m.holds[th])
	}
	m.holds[th] = int32(at)
	m.nholds++
	return nil
}

// waiter is a thread waiting for a sync object to reach need.
type waiter struct {
	need uint64
	th   int32
}

// Advance runs every thread greedily until no thread can move, as an
// advance event does (see [Advance]), and clears the holds. Its cost is
// bounded by the steps it executes and the size of the program, never by
// the values in it: blocked threads wait in per-object queues ordered by
// the value they need and are woken when their object reaches it.
func (m *Machine) Advance() {
	s := &m.State
	n := len(s.form.Threads)
	ready := make(intHeap, n) // thread ids in ascending order: a min-heap already
	inReady := make([]bool, n)
	for i := range ready {
		ready[i] = int32(i)
		inReady[i] = true
	}
	waiting := make([]waitHeap, len(s.releases))
	var free []int32 // dynamic tasks waiting for a free worker
	push := func(th int32) {
		if !inReady[th] {
			inReady[th] = true
			ready.push(th)
		}
	}
	wake := func(obj int32) {
		v := s.objectValue(obj)
		w := &waiting[obj]
		for len(*w) > 0 && (*w)[0].need <= v {
			push(w.pop().th)
		}
	}
	nc, nb := int32(len(s.p.Counters)), int32(len(s.p.Barriers))
	for len(ready) > 0 {
		th := ready.pop()
		inReady[th] = false
		for !s.heldAt(int(th)) {
			b := s.blocked(int(th))
			switch b.kind {
			case blockObject:
				waiting[b.obj].push(waiter{b.need, th})
			case blockFree:
				free = append(free, th)
			}
			if b.kind != canMove {
				break
			}
			op := s.form.Threads[th].Ops[s.Pos[th]]
			started, finished, holding := s.Started, s.finishedStarted, s.holding
			m.exec(int(th))
			switch op.Kind {
			case OpSignal:
				wake(op.Object)
			case OpArrive:
				wake(nc + op.Object)
			case OpRelease:
				wake(nc + nb + op.Object)
			}
			for w := started; w < s.Started; w++ {
				push(int32(w))
			}
			if s.Started > started || s.finishedStarted > finished || s.holding < holding {
				for _, d := range free {
					push(d)
				}
				free = free[:0]
			}
		}
	}
	if s.holds != nil {
		for i := range s.holds {
			s.holds[i] = -1
		}
	}
	s.nholds = 0
}

// intHeap is a binary min-heap of thread ids.
type intHeap []int32

func (h *intHeap) push(x int32) {
	*h = append(*h, x)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p] <= a[i] {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *intHeap) pop() int32 {
	a := *h
	x := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(a) && a[l] < a[m] {
			m = l
		}
		if r < len(a) && a[r] < a[m] {
			m = r
		}
		if m == i {
			break
		}
		a[m], a[i] = a[i], a[m]
		i = m
	}
	*h = a
	return x
}

// waitHeap is a binary min-heap of waiters by the value they need.
type waitHeap []waiter

func (h *waitHeap) push(x waiter) {
	*h = append(*h, x)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p].need <= a[i].need {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *waitHeap) pop() waiter {
	a := *h
	x := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(a) && a[l].need < a[m].need {
			m = l
		}
		if r < len(a) && a[r].need < a[m].need {
			m = r
		}
		if m == i {
			break
		}
		a[m], a[i] = a[i], a[m]
		i = m
	}
	*h = a
	return x
}
