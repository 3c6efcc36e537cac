package mpk

import (
	"fmt"
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// MaxHistories bounds the dispatch histories [Options.Histories] lists.
const MaxHistories = 256

// Histories lists the dispatch histories of g whose verdicts can differ
// under Static dispatch, each as an [Options.History], the mapping's
// default history first; nil when every history gives the verdict of the
// default one (one iteration, Dynamic dispatch, or none of the
// differences below).
//
// The scheduler that receives END(k-1), and so pushes BEGIN(k) and
// shifts its round-robin cursor by one, is the scheduler of whichever
// worker ends iteration k-1: of any task that triggers END and need not
// run before another task that does. Within one iteration the shift
// only relabels a scheduler's workers (two positions share a worker in
// every history or in none, in the same order), and a task that must run
// before END(k-1) is ordered before all of iteration k whatever the
// history. So the histories differ only through
//
//   - a task that need not run before END (it triggers no event, or one
//     that does not need it, or the END it triggers fires without it):
//     which later tasks share its worker, and so follow it in FIFO
//     order, depends on the history;
//   - workers that are not resident (more workers, or scheduler blocks
//     taking SMs, than the target has): which tasks land on them;
//   - a queue that can come within one entry of its capacity: which
//     worker also holds BEGIN.
//
// "Must run before" is taken through the graph's FIFO queues, through
// events whose num_triggers equals the number of tasks that trigger them
// (each of them is needed), and through events with more triggers than
// num_triggers by counting: a wait that needs n of an event's triggers
// (num_triggers of the first iteration's, fewer in later iterations,
// which earlier iterations' extra triggers help) is preceded by the first
// n − m triggers of a worker whose other workers hold m < n of them.
// Beyond [MaxHistories] histories it returns the first MaxHistories, by
// how few choices differ from the default history, and an invalid.limit
// error.
func (o Options) Histories(g *Graph) ([][]int, error) {
	o, c, err := o.checked(g)
	if err != nil {
		return nil, err
	}
	return o.histories(g, c)
}

// Programs maps g once per history [Options.Histories] lists, the default
// history first, or once when the verdict cannot depend on the history:
// a schedule is safe when every program is. o.History is ignored.
//
// Some graphs the programs cannot clear; for them Programs returns the
// programs with an error, and a program that is not safe still decides,
// while one that is safe proves nothing:
//
//   - beyond [MaxHistories] histories, the programs of the histories
//     listed, with an invalid.limit error;
//   - with two or more iterations, END_OF_TASK_GRAPH's num_triggers below
//     the number of tasks that trigger it, with an invalid.value error
//     whose message starts "unsupported:". MPK fires END when a signal
//     makes its counter exactly num_triggers × the signalling task's
//     iteration: END(1) fires early, at the same signal as in the
//     mapping, but a late trigger of one iteration can take the count
//     another iteration's END waits for, and the kernel then hangs (with
//     T triggers and num_triggers N < T, at the latest in iteration
//     ⌈T / (T-N)⌉ when every iteration's triggers come before the next
//     one's). The programs model the early start (the overlap of
//     iterations, which races when they touch the same bytes), not that
//     hang.
func (o Options) Programs(g *Graph) ([]*schedule.Program, error) {
	o, c, err := o.checked(g)
	if err != nil {
		return nil, err
	}
	o.History = nil
	hs, limit := o.histories(g, c)
	if hs == nil {
		if limit != nil {
			return nil, limit
		}
		hs = [][]int{nil}
	}
	out := make([]*schedule.Program, len(hs))
	for i, h := range hs {
		o.History = h
		if out[i], err = o.mapChecked(g, c); err != nil {
			return nil, err
		}
	}
	if o.Iterations >= 2 {
		if under := endUndercount(g, c); under != nil {
			if limit != nil {
				under.Diagnostics = append(limit.(*schedule.Error).Diagnostics, under.Diagnostics...)
			}
			return out, under
		}
	}
	return out, limit
}

// endUndercount is the unsupported diagnostic of a graph whose
// END_OF_TASK_GRAPH has fewer num_triggers than tasks that trigger it
// (see [Options.Programs]), or nil.
func endUndercount(g *Graph, c *checked) *schedule.Error {
	end := len(g.Events) - 1
	t := 0
	for pos := 2; pos < len(g.Tasks); pos++ {
		if int(c.trig[pos]) == end {
			t++
		}
	}
	n := g.Events[end].NumTriggers
	if int64(t) <= n {
		return nil
	}
	var d diags
	d.add(schedule.CodeValue, fmt.Sprintf("$.all_events[%d].num_triggers", end),
		"unsupported: END_OF_TASK_GRAPH has num_triggers %d but %d tasks trigger it: MPK fires END only when a signal makes its count exactly num_triggers × that task's iteration, so END fires before the iteration ends and a late trigger can take the count a later END waits for, which can hang the kernel (in iteration %d when every iteration's triggers come before the next one's); megaproof does not model that hang, so no program of this graph proves it safe",
		n, t, (int64(t)+int64(t)-n-1)/(int64(t)-n))
	return d.err().(*schedule.Error)
}

// histories is Histories on a checked graph, with o's defaults set.
func (o Options) histories(g *Graph, c *checked) ([][]int, error) {
	if o.Dispatch != Static || o.Iterations < 2 {
		return nil, nil
	}
	m := &mapper{o: o, c: c, g: g}
	positions := m.layout()
	W, S, K := o.Workers, o.Schedulers, o.Iterations
	n, nev := len(g.Tasks), len(g.Events)
	end := int32(nev - 1)

	// Triggers per event; an event is needed when all of them are.
	triggers := make([][]int32, nev)
	for pos := 2; pos < n; pos++ {
		if e := c.trig[pos]; e >= 0 {
			triggers[e] = append(triggers[e], int32(pos))
		}
	}
	needed := func(e int32) bool {
		nt := g.Events[e].NumTriggers
		return nt > 0 && int64(len(triggers[e])) == nt
	}
	if int64(len(triggers[end])) < g.Events[end].NumTriggers {
		return nil, nil // END never fires: no iteration after the first starts
	}

	// One iteration's assignment gives every iteration's FIFO order.
	saved := slices.Clone(m.cursor)
	m.next(0) // BEGIN(1)
	worker := make([]int, n)
	for pos := 2; pos < n; pos++ {
		worker[pos] = m.next(int(m.sched[pos]))
	}
	copy(m.cursor, saved)
	prev, next := make([]int32, n), make([]int32, n)
	last := make([]int32, W)
	for w := range last {
		last[w] = -1
	}
	for pos := 2; pos < n; pos++ {
		prev[pos], next[pos] = last[worker[pos]], -1
		if prev[pos] >= 0 {
			next[prev[pos]] = int32(pos)
		}
		last[worker[pos]] = int32(pos)
	}

	// sure: the positions that must run before END, backwards from the
	// tasks that trigger it.
	sure := make([]bool, n)
	var work []int32
	mark := func(pos int32) {
		if pos >= 0 && !sure[pos] {
			sure[pos] = true
			work = append(work, pos)
		}
	}
	if needed(end) {
		for _, t := range triggers[end] {
			mark(t)
		}
	}
	done := make([]bool, nev)
	for len(work) > 0 {
		y := work[len(work)-1]
		work = work[:len(work)-1]
		mark(prev[y])
		e := c.dep[y]
		if e < 0 || done[e] {
			continue
		}
		if needed(e) {
			done[e] = true
			for _, t := range triggers[e] {
				mark(t)
			}
			continue
		}
		// An event with more triggers than num_triggers: y's wait needs
		// at least need of an iteration's triggers (those of the earlier
		// iterations count toward a later one's wait: nt·k of them by
		// iteration k, of T a one), so on a worker whose other workers
		// hold fewer than need of them, its first need − others
		// triggers in FIFO order run before y.
		nt, T := g.Events[e].NumTriggers, int64(len(triggers[e]))
		if nt <= 0 || T <= nt {
			continue
		}
		done[e] = true
		need := nt*int64(K-1) - T*int64(K-2)
		if need <= 0 {
			continue
		}
		on := map[int][]int32{}
		for _, t := range triggers[e] {
			on[worker[t]] = append(on[worker[t]], t)
		}
		for _, ts := range on {
			if others := T - int64(len(ts)); others < need {
				mark(ts[need-others-1])
			}
		}
	}
	waiters := make([][]int32, nev)
	for pos := 2; pos < n; pos++ {
		if e := c.dep[pos]; e >= 0 && g.Events[e].NumTriggers > 0 {
			waiters[e] = append(waiters[e], int32(pos))
		}
	}
	// The tasks that can end an iteration: END's triggers that need not
	// run before another.
	var enders []int32
	for _, t := range triggers[end] {
		later := next[t] >= 0 && sure[next[t]]
		if e := c.trig[t]; needed(e) && slices.ContainsFunc(waiters[e], func(w int32) bool { return sure[w] }) {
			later = true
		}
		if !needed(end) || !later {
			enders = append(enders, t)
		}
	}

	depends := false
	for pos := 2; pos < n; pos++ {
		depends = depends || !sure[pos]
	}
	launched := W
	if o.Residency == Exclusive {
		launched += S
	}
	depends = depends || launched > o.SMs
	for s := range S {
		if k := m.hi[s] - m.lo[s]; k > 0 && (positions[s]+1+k-1)/k >= o.WorkerQueueLen {
			depends = true
		}
	}
	if !depends || len(enders) == 0 {
		return nil, nil
	}

	// Every sequence of choices, the default one first.
	ceil := (W + S - 1) / S
	// Every sequence of choices, by how many differ from the default one
	// (the default history first, then those that change one choice, ...).
	var out [][]int
	several, full := false, false
	var walk func(k int, cursor []int, hist []int, dev, want int)
	walk = func(k int, cursor []int, hist []int, dev, want int) {
		if full {
			return
		}
		copy(m.cursor, cursor)
		e := 0
		if k > 1 {
			e = hist[k-2]
		}
		m.next(e)
		for pos := 2; pos < n; pos++ {
			worker[pos] = m.next(int(m.sched[pos]))
		}
		if k == K {
			if dev == want {
				if len(out) == MaxHistories {
					full = true
					return
				}
				out = append(out, slices.Clone(hist))
			}
			return
		}
		def := min(worker[c.endLeaf]/ceil, S-1)
		choices := []int{def}
		for _, t := range enders {
			if s := min(worker[t]/ceil, S-1); !slices.Contains(choices, s) {
				choices = append(choices, s)
			}
		}
		several = several || len(choices) > 1
		after := slices.Clone(m.cursor)
		for i, s := range choices {
			if d := dev + min(i, 1); d <= want {
				walk(k+1, after, append(hist, s), d, want)
			}
		}
	}
	for want := 0; want < K && !full; want++ {
		walk(1, slices.Clone(m.cursor), nil, 0, want)
		if !several {
			return nil, nil
		}
	}
	if full {
		var d diags
		d.add(schedule.CodeLimit, "$.all_tasks", "the verdict depends on which worker ends each iteration, and %d iterations have more than %d such histories; verify fewer iterations", K, MaxHistories)
		return out, d.err()
	}
	if !several {
		return nil, nil
	}
	return out, nil
}
