package amk

import (
	"strconv"
	"strings"

	"github.com/megaproof/megaproof/schedule"
)

// Paths is the [schedule.Locator] of an AMK document mapped by this
// package: task i of the program is $.tasks[i] (tasks keep their list
// order), step j of its Before list is its wait $.tasks[i].waits[j], and
// its After step, the signal, is $.tasks[i].out_counter. Buffers keep
// their list order too (buffer b is $.buffers[b]), and counter c is the
// AMK counter whose id [CounterID] gives. With Program, the program the
// paths are of, a step on a queue counter (QueuePrefix: AMK's per-SM queue
// order, which the document states by no key of its own) is located at its
// task.
type Paths struct {
	Program *schedule.Program
}

// TaskPath returns "$.tasks[i]".
func (Paths) TaskPath(task int) string { return "$.tasks[" + strconv.Itoa(task) + "]" }

// StepPath returns "$.tasks[i].waits[j]" for a wait and
// "$.tasks[i].out_counter" for the signal; "$.tasks[i]" for a step on a
// queue counter.
func (p Paths) StepPath(task int, after bool, step int) string {
	if p.queueStep(task, after, step) {
		return p.TaskPath(task)
	}
	if after {
		return p.TaskPath(task) + ".out_counter"
	}
	return p.TaskPath(task) + ".waits[" + strconv.Itoa(step) + "]"
}

// queueStep reports whether the step is on a queue counter of p.Program.
func (p Paths) queueStep(task int, after bool, step int) bool {
	if p.Program == nil || task < 0 || task >= len(p.Program.Tasks) {
		return false
	}
	t := &p.Program.Tasks[task]
	list := t.Before
	if after {
		list = t.After
	}
	if step < 0 || step >= len(list) {
		return false
	}
	c := list[step].Object
	return c >= 0 && int(c) < len(p.Program.Counters) && strings.HasPrefix(p.Program.Counters[c].Name, QueuePrefix)
}

// Queued reports whether p, mapped by this package, stands for AMK's per-SM
// queues with queue counters (see doc.go).
func Queued(p *schedule.Program) bool {
	for i := range p.Counters {
		if strings.HasPrefix(p.Counters[i].Name, QueuePrefix) {
			return true
		}
	}
	return false
}

// CounterID returns the AMK id of counter c of a program this package
// mapped, read back from the counter's name c<id>; ok is false for a
// counter p does not have or that is not so named.
func CounterID(p *schedule.Program, c int) (id int64, ok bool) {
	if c < 0 || c >= len(p.Counters) {
		return 0, false
	}
	name := p.Counters[c].Name
	if len(name) < 2 || name[0] != 'c' {
		return 0, false
	}
	id, err := strconv.ParseInt(name[1:], 10, 64)
	if err != nil || counterName(id) != name {
		return 0, false
	}
	return id, true
}
