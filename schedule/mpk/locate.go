package mpk

import (
	"strconv"
	"strings"

	"github.com/megaproof/megaproof/schedule"
)

// Paths is the [schedule.Locator] of a program this package mapped from
// an MPK file: task "t<p>.<TYPE>@<k>" (any iteration k) is $.all_tasks[p];
// its wait on the dependent event is $.all_tasks[p].dependent_event and its
// signal of the trigger event $.all_tasks[p].trigger_event. The steps and
// tasks the mapping adds (the launch event's gate, BEGIN's relays, the
// schedulers, TERMINATE, the queue counters) have no element of their own
// in the file: their paths are "" (BEGIN_TASK_GRAPH, at position 1, is
// $.all_tasks[1]).
type Paths struct {
	// Program is the mapped program the task indices refer to.
	Program *schedule.Program
}

// position is the all_tasks position a task's name carries, or -1.
func (l Paths) position(task int) int {
	if l.Program == nil || task < 0 || task >= len(l.Program.Tasks) {
		return -1
	}
	name := l.Program.Tasks[task].Name
	if !strings.HasPrefix(name, "t") || !strings.Contains(name, "@") {
		return -1
	}
	digits, _, ok := strings.Cut(name[1:], ".")
	if !ok {
		return -1
	}
	pos, err := strconv.Atoi(digits)
	if err != nil || pos < 0 {
		return -1
	}
	return pos
}

// TaskPath returns "$.all_tasks[p]", or "" for a task the mapping added.
func (l Paths) TaskPath(task int) string {
	pos := l.position(task)
	if pos < 0 {
		return ""
	}
	return "$.all_tasks[" + strconv.Itoa(pos) + "]"
}

// StepPath returns the path of a task's dependent_event (its sys-scoped
// wait) or trigger_event (its first signal), or "" for a step the mapping
// added.
func (l Paths) StepPath(task int, after bool, step int) string {
	pos := l.position(task)
	if pos < 2 {
		return ""
	}
	t := &l.Program.Tasks[task]
	switch {
	case after && step == 0 && len(t.After) > 0 && t.After[0].Kind == schedule.Signal:
		return l.TaskPath(task) + ".trigger_event"
	case !after && step == len(t.Before)-1 && t.Before[step].Kind == schedule.Wait && t.Before[step].Scope == schedule.ScopeSys:
		return l.TaskPath(task) + ".dependent_event"
	}
	return ""
}

// EventOf returns the all_events position of counter c of a program this
// package mapped: the counters of the events come first, counter e named
// e<e>; ok is false for a counter the mapping added (the queues).
func EventOf(p *schedule.Program, c int) (event int, ok bool) {
	if c < 0 || c >= len(p.Counters) || p.Counters[c].Name != "e"+strconv.Itoa(c) {
		return 0, false
	}
	return c, true
}
