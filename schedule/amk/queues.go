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
// AMK ids: edges from every producer of a counter (the task that signals
// it) to every task that waits on it, each pair once; Kahn's algorithm
// with the tasks of no incoming edge in ascending id order first, each
// task's successors in ascending id order. ok is false on a cycle.
func topoOrder(p *schedule.Program, ids []int64) (order []int, ok bool) {
	n := len(p.Tasks)
	producers := make([][]int, len(p.Counters))
	for i := range p.Tasks {
		for _, s := range p.Tasks[i].After {
			if s.Kind == schedule.Signal {
				producers[s.Object] = append(producers[s.Object], i)
			}
		}
	}
	type edge struct{ a, b int }
	var edges []edge
	for i := range p.Tasks {
		for _, s := range p.Tasks[i].Before {
			if s.Kind == schedule.Wait {
				for _, a := range producers[s.Object] {
					edges = append(edges, edge{a, i})
				}
			}
		}
	}
	byID := func(x, y edge) int {
		if c := cmp.Compare(ids[x.a], ids[y.a]); c != 0 {
			return c
		}
		return cmp.Compare(ids[x.b], ids[y.b])
	}
	slices.SortFunc(edges, byID)
	edges = slices.Compact(edges)
	succ := make([][]int, n)
	indeg := make([]int, n)
	for _, e := range edges {
		succ[e.a] = append(succ[e.a], e.b)
		indeg[e.b]++
	}
	ready := make([]int, 0, n)
	for i := range p.Tasks {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	slices.SortFunc(ready, func(x, y int) int { return cmp.Compare(ids[x], ids[y]) })
	for k := 0; k < len(ready); k++ {
		for _, b := range succ[ready[k]] {
			if indeg[b]--; indeg[b] == 0 {
				ready = append(ready, b)
			}
		}
	}
	return ready, len(ready) == n
}
