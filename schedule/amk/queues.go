package amk

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/megaproof/megaproof/schedule"
)

// QueuePrefix begins the names of the counters that stand for AMK's per-SM
// queues (see doc.go, "Placement and launch"): queue.sm<s>.
const QueuePrefix = "queue.sm"

// queues runs the tasks of a program with pinned tasks as AMK's GPU loader
// queues them: each SM's queue in the program's topological order (Kahn's
// algorithm over the edges from every counter's producers to its waiters,
// lowest AMK id first, as AMK's MegakernelProgram.topological_order), the
// unpinned tasks on SM 0. Where every SM's queue is its tasks in task-list
// order and no task is unpinned, the static mapping is that execution and
// nothing changes. Otherwise each task of a queue of two or more becomes a
// dynamic task that waits, after its own waits, for the queue counter of
// its SM to reach its place in the queue and adds one to it after its own
// signal: one task of a queue runs at a time, in queue order, and the
// task list (and its paths) stays AMK's. Nothing changes either when the
// graph has a cycle (AMK's loader refuses to load it) or the document had
// errors.
func (m *mapper) queues() {
	p := m.p
	if len(m.smUses) == 0 || m.ds.Added() > 0 {
		return
	}
	n := len(p.Tasks)
	ids := make([]int64, n)
	for i := range p.Tasks {
		id, ok := nameID(p.Tasks[i].Name)
		if !ok {
			return
		}
		ids[i] = id
	}
	order, ok := topoOrder(p, ids)
	if !ok {
		return
	}
	sm := func(i int) int32 { return max(p.Tasks[i].Worker, 0) }
	// pos[i] is task i's place in its SM's queue; inOrder stays true while
	// every queue is in task-list order and every task pinned.
	pos := make([]int32, n)
	lens := map[int32]int32{}
	last := map[int32]int{}
	inOrder := len(m.smUses) == n
	for _, i := range order {
		s := sm(i)
		pos[i] = lens[s]
		lens[s]++
		if j, seen := last[s]; seen && j > i {
			inOrder = false
		}
		last[s] = i
	}
	if inOrder {
		return
	}
	qc := map[int32]int32{}
	sms := make([]int32, 0, len(lens))
	for s, l := range lens {
		if l >= 2 {
			sms = append(sms, s)
		}
	}
	slices.Sort(sms)
	for _, s := range sms {
		qc[s] = int32(len(p.Counters))
		p.Counters = append(p.Counters, schedule.Counter{Name: QueuePrefix + strconv.Itoa(int(s)), Width: 32})
	}
	for i := range p.Tasks {
		t := &p.Tasks[i]
		c, queued := qc[sm(i)]
		t.Worker = schedule.Dynamic
		if !queued {
			continue
		}
		if pos[i] > 0 {
			t.Before = append(t.Before[:len(t.Before):len(t.Before)], schedule.Step{Kind: schedule.Wait, Object: c, Value: uint64(pos[i])})
		}
		t.After = append(t.After[:len(t.After):len(t.After)], schedule.Step{Kind: schedule.Signal, Object: c, Value: 1})
	}
}

// nameID is the AMK id in a task name t<id>.<OP> (taskName).
func nameID(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, "t")
	if !ok {
		return 0, false
	}
	if k := strings.IndexByte(rest, '.'); k >= 0 {
		rest = rest[:k]
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}

// topoOrder is AMK's topological order of p's tasks (by index), from their
// AMK ids: edges from every producer of a counter (a task that signals it)
// to every task that waits on it, each pair once; Kahn's algorithm with the
// tasks of no incoming edge in ascending id order first, each popped task's
// successors in ascending id order. ok is false on a cycle. It works per
// counter rather than per edge, so that the work is bounded by the steps,
// not by producers × waiters: a task's last incoming edge is removed when
// the last producer of the last of its counters is popped, and the tasks
// that pop makes ready are appended in ascending id, as Kahn's would.
func topoOrder(p *schedule.Program, ids []int64) (order []int, ok bool) {
	n := len(p.Tasks)
	byID := func(x, y int) int { return cmp.Compare(ids[x], ids[y]) }
	left := make([]int, len(p.Counters)) // producers of a counter not yet popped
	for i := range p.Tasks {
		for _, s := range p.Tasks[i].After {
			if s.Kind == schedule.Signal {
				left[s.Object]++
			}
		}
	}
	waiters := make([][]int, len(p.Counters)) // each waiter once per counter
	pending := make([]int, n)                 // counters with producers a task waits on, each once
	for i := range p.Tasks {
		for _, s := range p.Tasks[i].Before {
			if c := s.Object; s.Kind == schedule.Wait && left[c] > 0 {
				if w := waiters[c]; len(w) == 0 || w[len(w)-1] != i {
					waiters[c] = append(w, i)
					pending[i]++
				}
			}
		}
	}
	ready := make([]int, 0, n)
	for i := range p.Tasks {
		if pending[i] == 0 {
			ready = append(ready, i)
		}
	}
	slices.SortFunc(ready, byID)
	var now []int
	for k := 0; k < len(ready); k++ {
		now = now[:0]
		for _, s := range p.Tasks[ready[k]].After {
			if s.Kind != schedule.Signal {
				continue
			}
			if left[s.Object]--; left[s.Object] == 0 {
				for _, b := range waiters[s.Object] {
					if pending[b]--; pending[b] == 0 {
						now = append(now, b)
					}
				}
			}
		}
		slices.SortFunc(now, byID)
		ready = append(ready, now...)
	}
	return ready, len(ready) == n
}
