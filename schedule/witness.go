package schedule

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/megaproof/megaproof/internal/geom"
)

// CheckWitness confirms that trace exhibits a finding of the given code
// (see docs/SEMANTICS.md) for the given tasks, by replaying it. It returns
// nil when the witness holds and an error saying what fails otherwise.
//
// Deadlock and non-cooperative occupancy witnesses must end in a stuck
// state. A race witness (tasks[0], tasks[1]) must begin both bodies with
// neither happening before the other, and the tasks must conflict. An
// uninitialized-read witness (tasks[0] the reader) must begin the reader at
// a point where some byte it reads from a scratch or output buffer is not
// written by a same-buffer write of a task whose body happens before. A
// counter-overflow witness must overflow a counter, one that tasks[0]
// signals when tasks are given. A race.scope witness
// must reach an operation of each task on one sync object as
// docs/SEMANTICS.md defines it. Static findings (out-of-bounds,
// readonly-write, output-unwritten, cooperative occupancy) take no trace.
// An invalid or nil program is refused with its validation error.
func CheckWitness(p *Program, code string, tasks []int, trace []Event) error {
	if err := p.Validate(); err != nil {
		return err
	}
	for _, t := range tasks {
		if t < 0 || t >= len(p.Tasks) {
			return fmt.Errorf("witness names task %d of %d", t, len(p.Tasks))
		}
	}
	switch code {
	case "out-of-bounds", "readonly-write", "output-unwritten":
		if len(trace) != 0 {
			return fmt.Errorf("%s is static and takes no trace", code)
		}
		return nil
	case "occupancy":
		if len(trace) == 0 && p.Launch.Cooperative && p.Launch.Workers > p.Launch.Capacity() {
			return nil
		}
	}
	st, err := Replay(p, trace)
	if err != nil {
		return err
	}
	return st.Exhibits(code, tasks)
}

// The failures Exhibits reports with a fixed message, made once: the
// witness minimiser asks about many candidate traces that fail.
var (
	errNoDeadlock     = errors.New("the trace does not end in a deadlock")
	errNoOverflow     = errors.New("no counter overflowed")
	errRaceTasks      = errors.New("a race witness names two tasks")
	errNoBodies       = errors.New("the trace does not begin both bodies")
	errOrdered        = errors.New("one body happens before the other")
	errNoReader       = errors.New("an uninitialized-read witness names the reader")
	errReaderNotBegun = errors.New("the trace does not begin the reader")
	errCovered        = errors.New("every byte the reader reads is written before it")
)

// Exhibits judges the state an execution of a valid program reached (by
// [Replay] or a [Machine]) as [CheckWitness] judges the state its trace
// reaches: nil when it exhibits a finding of the given code for the given
// tasks, an error saying what fails otherwise. Static codes, which take no
// trace, are CheckWitness's alone.
func (st *State) Exhibits(code string, tasks []int) error {
	p := st.p
	family, _, _ := strings.Cut(code, ".")
	for _, t := range tasks {
		if t < 0 || t >= len(p.Tasks) {
			return fmt.Errorf("witness names task %d of %d", t, len(p.Tasks))
		}
	}
	switch family {
	case "deadlock", "occupancy":
		if !st.Stuck() {
			return errNoDeadlock
		}
		return nil
	case "counter-overflow":
		for c, o := range st.Overflowed {
			if o && (len(tasks) == 0 || signals(&p.Tasks[tasks[0]], int32(c))) {
				return nil
			}
		}
		if len(tasks) > 0 {
			return fmt.Errorf("no counter that task %q signals overflowed", p.Tasks[tasks[0]].Name)
		}
		return errNoOverflow
	case "race":
		if len(tasks) < 2 {
			return errRaceTasks
		}
		a, b := tasks[0], tasks[1]
		if code == "race.scope" {
			return checkScopeRace(p, st, a, b)
		}
		if !Conflict(p, a, b) {
			return fmt.Errorf("tasks %q and %q do not conflict", p.Tasks[a].Name, p.Tasks[b].Name)
		}
		ba, ea := st.BodyEvents(a)
		bb, eb := st.BodyEvents(b)
		if ba < 0 || bb < 0 {
			return errNoBodies
		}
		if st.HappensBefore(ea, bb) || st.HappensBefore(eb, ba) {
			return errOrdered
		}
		return nil
	case "uninitialized-read":
		if len(tasks) < 1 {
			return errNoReader
		}
		r := tasks[0]
		br, _ := st.BodyEvents(r)
		if br < 0 {
			return errReaderNotBegun
		}
		switch un, err := uncoveredRead(p, st, r, br); {
		case err != nil:
			return err
		case !un:
			return errCovered
		}
		return nil
	}
	return fmt.Errorf("no witness check for code %q", code)
}

// uncoveredRead reports whether task r, begun at event br, reads a byte of a
// scratch or output buffer that no same-buffer write of a task whose body
// happens before br covers. Coverage is decided on the accesses'
// rectangles, never row by row; a question beyond the footprint budget is
// an error.
func uncoveredRead(p *Program, st *State, r, br int) (bool, error) {
	past := st.Past(br)
	for _, rd := range p.Tasks[r].Reads {
		k := p.Buffers[rd.Buffer].Kind
		if k != KindScratch && k != KindOutput {
			continue
		}
		var cover []geom.Rect
		for w := range p.Tasks {
			if w == r {
				continue
			}
			if _, ew := st.BodyEvents(w); ew < 0 || !past(ew) {
				continue
			}
			for _, wr := range p.Tasks[w].Writes {
				if wr.Buffer == rd.Buffer {
					cover = append(cover, bufferRect(wr))
				}
			}
		}
		_, found, ok := geom.Uncovered([]geom.Rect{bufferRect(rd)}, cover, footprintBudget)
		if !ok {
			return false, fmt.Errorf("deciding whether the writes before task %q cover its read of %q needs more than %d pieces", p.Tasks[r].Name, p.Buffers[rd.Buffer].Name, footprintBudget)
		}
		if found {
			return true, nil
		}
	}
	return false, nil
}

// TraceKey is the events of trace as a string, for map keys: two traces
// have one key exactly when they are the same events. A replay is
// deterministic, so the state a trace reaches can be kept by its key and
// judged again for another finding with [State.Exhibits].
func TraceKey(trace []Event) string {
	b := make([]byte, 0, 8*len(trace))
	for _, e := range trace {
		b = binary.LittleEndian.AppendUint32(b, uint32(e.Thread))
		b = binary.LittleEndian.AppendUint32(b, uint32(e.Step))
	}
	return string(b)
}

// ArenaSpan maps a byte range of a buffer to its arena's address space: the
// arena index (or -1-buffer for a buffer without arena) and the shifted range.
func ArenaSpan(p *Program, buf int32, lo, hi int64) (arena int32, alo, ahi int64) {
	b := p.Buffers[buf]
	if b.Arena == NoArena {
		return -1 - buf, lo, hi
	}
	return b.Arena, lo + int64(b.Offset), hi + int64(b.Offset)
}

// Conflict reports whether tasks a and b access overlapping arena bytes
// with at least one write. Overlap is decided on the accesses' rectangles
// by arithmetic, never row by row.
func Conflict(p *Program, a, b int) bool {
	ta, tb := &p.Tasks[a], &p.Tasks[b]
	return overlapAny(p, ta.Writes, tb.Writes) || overlapAny(p, ta.Writes, tb.Reads) || overlapAny(p, ta.Reads, tb.Writes)
}

func overlapAny(p *Program, xs, ys []Access) bool {
	for _, x := range xs {
		kx, rx := arenaRect(p, x)
		for _, y := range ys {
			if ky, ry := arenaRect(p, y); kx == ky && geom.Overlap(rx, ry) {
				return true
			}
		}
	}
	return false
}

// signals reports whether task t signals counter c.
func signals(t *Task, c int32) bool {
	for _, list := range [2][]Step{t.Before, t.After} {
		for _, s := range list {
			if s.Kind == Signal && s.Object == c {
				return true
			}
		}
	}
	return false
}
