package amk

import (
	"strconv"

	"github.com/megaproof/megaproof/schedule"
)

// Paths is the [schedule.Locator] of an AMK document mapped by this
// package: task i of the program is $.tasks[i] (tasks keep their list
// order), step j of its Before list is its wait $.tasks[i].waits[j], and
// its one After step, the signal, is $.tasks[i].out_counter. Buffers keep
// their list order too (buffer b is $.buffers[b]), and counter c is the
// AMK counter whose id [CounterID] gives.
type Paths struct{}

// TaskPath returns "$.tasks[i]".
func (Paths) TaskPath(task int) string { return "$.tasks[" + strconv.Itoa(task) + "]" }

// StepPath returns "$.tasks[i].waits[j]" for a wait and
// "$.tasks[i].out_counter" for the signal.
func (p Paths) StepPath(task int, after bool, step int) string {
	if after {
		return p.TaskPath(task) + ".out_counter"
	}
	return p.TaskPath(task) + ".waits[" + strconv.Itoa(step) + "]"
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
