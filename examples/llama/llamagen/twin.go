package llamagen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/megaproof/megaproof/schedule"
)

// Fault is a one-edit change that makes a generated schedule unsafe.
type Fault uint8

// Faults. Each edits one task (or the launch) of the middle layer of a
// program made by [Generate] with counters (every strategy but Barrier,
// except ExtraWorker which applies to all).
const (
	// DropWait removes the wait of o-projection tile 0 on the attention
	// counter: it may read attention outputs before they are written.
	DropWait Fault = iota
	// LowerThreshold lowers that wait's threshold by one: the tile may
	// start while one head is still writing.
	LowerThreshold
	// RaiseThreshold raises it past everything that signals the counter.
	RaiseThreshold
	// ShiftTile moves gate tile 0's write one element right, into tile 1.
	ShiftTile
	// RelaxSignal makes the first attention signal relaxed: the o tile
	// still must run after it, but nothing orders the memory.
	RelaxSignal
	// ExtraWorker launches one worker more than the target keeps
	// co-resident, cooperatively.
	ExtraWorker
)

// Faults lists every fault.
func Faults() []Fault {
	return []Fault{DropWait, LowerThreshold, RaiseThreshold, ShiftTile, RelaxSignal, ExtraWorker}
}

var faultNames = [...]string{
	DropWait: "drop-wait", LowerThreshold: "lower-threshold", RaiseThreshold: "raise-threshold",
	ShiftTile: "shift-tile", RelaxSignal: "relax-signal", ExtraWorker: "extra-worker",
}

func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return fmt.Sprintf("Fault(%d)", uint8(f))
}

// Codes are the finding codes megaproof may report for the fault; a
// correct verifier reports at least one of them, and the first is the one
// the fault is designed to provoke.
func (f Fault) Codes() []string {
	switch f {
	case DropWait, LowerThreshold:
		return []string{"race.raw", "uninitialized-read"}
	case RaiseThreshold:
		return []string{"deadlock.unsatisfiable"}
	case ShiftTile:
		return []string{"race.waw", "uninitialized-read"}
	case RelaxSignal:
		return []string{"race.unsynchronized", "uninitialized-read"}
	case ExtraWorker:
		return []string{"occupancy"}
	}
	return nil
}

// Twin returns a copy of p, a program made by [Generate], with fault f
// applied. p is not modified.
func Twin(p *schedule.Program, f Fault) (*schedule.Program, error) {
	q := p.Clone()
	mid := -1
	for _, t := range q.Tasks {
		if v, ok := t.Params.Get("layer"); ok && int(v) > mid {
			mid = int(v)
		}
	}
	mid /= 2
	find := func(name string) (*schedule.Task, error) {
		for i := range q.Tasks {
			if q.Tasks[i].Name == name {
				return &q.Tasks[i], nil
			}
		}
		return nil, fmt.Errorf("llamagen: %s: program %q has no task %q", f, p.Name, name)
	}
	// The o tile's first wait is its data wait (credit waits come after).
	oWait := func() (*schedule.Task, int, error) {
		t, err := find(fmt.Sprintf("L%d.o.t0", mid))
		if err != nil {
			return nil, 0, err
		}
		for j, s := range t.Before {
			if s.Kind == schedule.Wait {
				return t, j, nil
			}
		}
		return nil, 0, fmt.Errorf("llamagen: %s: task %q has no wait (a barrier schedule?)", f, t.Name)
	}
	switch f {
	case DropWait:
		t, j, err := oWait()
		if err != nil {
			return nil, err
		}
		t.Before = slices.Delete(t.Before, j, j+1)
	case LowerThreshold:
		t, j, err := oWait()
		if err != nil {
			return nil, err
		}
		t.Before[j].Value--
	case RaiseThreshold:
		t, j, err := oWait()
		if err != nil {
			return nil, err
		}
		c := t.Before[j].Object
		total := q.Counters[c].Init
		for _, u := range q.Tasks {
			for _, s := range u.After {
				if s.Kind == schedule.Signal && s.Object == c {
					total += s.Value
				}
			}
		}
		t.Before[j].Value = total + 1
	case ShiftTile:
		t, err := find(fmt.Sprintf("L%d.gate.t0", mid))
		if err != nil {
			return nil, err
		}
		if _, err := find(fmt.Sprintf("L%d.gate.t1", mid)); err != nil {
			return nil, err
		}
		t.Writes[0].Offset += actBytes
	case RelaxSignal:
		t, j, err := oWait()
		if err != nil {
			return nil, err
		}
		c := t.Before[j].Object
		prefix := fmt.Sprintf("L%d.", mid)
		for i := range q.Tasks {
			u := &q.Tasks[i]
			if !strings.HasPrefix(u.Name, prefix) {
				continue
			}
			for k, s := range u.After {
				if s.Kind == schedule.Signal && s.Object == c {
					u.After[k].Relaxed = true
					return q, q.Validate()
				}
			}
		}
		return nil, fmt.Errorf("llamagen: %s: nothing in layer %d signals the attention counter", f, mid)
	case ExtraWorker:
		q.Launch.Workers = q.Launch.Capacity() + 1
		q.Launch.Cooperative = true
	default:
		return nil, fmt.Errorf("llamagen: unknown fault %d", f)
	}
	return q, q.Validate()
}
