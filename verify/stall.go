package verify

import (
	"context"
	"fmt"
	"strings"

	"github.com/megaproof/megaproof/schedule"
)

// This file looks for a dispatch stall in programs too large for the
// explorer. It refutes only: a found stall is a witness that
// schedule.CheckWitness confirms; finding none proves nothing.
//
// The run is an adversarial scheduler on schedule.Machine (the witness
// judge's own semantics): it runs every claimed task and static thread as
// far as it goes, then claims a task that can block after its guard (one
// that holds its worker), and only then a simple one. Tasks that wait at a
// barrier or for each other thus take every free worker before the ones
// they wait for, which is how a pool of dynamic barrier syncs or a static
// worker waiting on a blocking dynamic task stalls on the GPU. The stall
// is occupancy when the unbounded launch (every worker resident, every
// dynamic task a thread of its own) does not deadlock.

// maxStallSteps bounds the adversarial run's scans.
const maxStallSteps = 1 << 26

// dispatchStall returns a stall witness and the tasks stuck in it, or nil.
func (v *verifier) dispatchStall(ctx context.Context) ([]schedule.Event, []int, error) {
	p := v.orig
	m, err := schedule.NewMachine(p)
	if err != nil {
		return nil, nil, nil
	}
	f := m.Form()
	work := 0
	for work < maxStallSteps {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		moved := false
		for th := range f.Threads {
			for !m.Finished(th) && (th < f.Workers || m.Pos[th] > 0) && m.Enabled(th) == nil {
				if m.Step(schedule.Event{Thread: int32(th), Step: m.Pos[th]}) != nil {
					return nil, nil, nil
				}
				moved = true
				work++
			}
			work++
		}
		if moved {
			continue
		}
		claimed := false
		for _, simple := range []bool{false, true} {
			for th := f.Workers; th < len(f.Threads) && !claimed; th++ {
				if m.Pos[th] == 0 && f.Threads[th].Simple() == simple && m.Enabled(th) == nil {
					if m.Step(schedule.Event{Thread: int32(th), Step: 0}) != nil {
						return nil, nil, nil
					}
					claimed = true
				}
				work++
			}
		}
		if !claimed {
			break
		}
	}
	if !m.Stuck() {
		return nil, nil, nil
	}
	// Occupancy only if the unbounded launch cannot deadlock: there the
	// confluent engine decides it.
	u := lowerForm(unboundedLaunch(p))
	e := newEngine(u, false)
	defer u.release()
	defer e.release()
	e.ctx = ctx
	e.reset()
	e.run()
	if e.cut {
		return nil, nil, ctx.Err()
	}
	if len(e.stuck()) > 0 {
		return nil, nil, nil
	}
	var stuck []int
	for th := range f.Threads {
		if !m.Finished(th) && m.Pos[th] < int32(len(f.Threads[th].Ops)) {
			stuck = append(stuck, int(f.Threads[th].Ops[m.Pos[th]].Task))
		}
	}
	return m.Trace(), stuck, nil
}

// unboundedLaunch returns p with every worker resident and every dynamic
// task pinned to a worker of its own.
func unboundedLaunch(p *schedule.Program) *schedule.Program {
	q := p.Clone()
	q.Launch.Cooperative = true
	for i := range q.Tasks {
		if !q.Tasks[i].Pinned() {
			q.Tasks[i].Worker = int32(q.Launch.Workers)
			q.Launch.Workers++
		}
	}
	q.Launch.SMs = max(q.Launch.SMs, q.Launch.Workers)
	return q
}

// stallFinding reports a stall found by dispatchStall.
func (v *verifier) stallFinding(trace []schedule.Event, stuck []int) Finding {
	p := v.orig
	var names []string
	for _, t := range stuck {
		if len(names) == 8 {
			names = append(names, fmt.Sprintf("and %d more", len(stuck)-8))
			break
		}
		names = append(names, fmt.Sprintf("%q", p.Tasks[t].Name))
	}
	blocking := nonSimpleDynamic(p)
	return Finding{
		Code: CodeOccupancy,
		Message: fmt.Sprintf("dynamic tasks that block after their guard can hold every free worker while the tasks they wait for have none: stuck at %s; the launch has %d workers for %d such tasks, and with every dynamic task on a worker of its own it cannot deadlock",
			strings.Join(names, ", "), p.Launch.Workers, blocking),
		Tasks:   stuck,
		Fix:     fmt.Sprintf("launch more workers than the %d dynamic tasks that can block (each holds one while it waits), pin them to workers, or move their waits into their guard", blocking),
		Witness: trace,
	}
}
