package amk

import "strconv"

// Paths is the [schedule.Locator] of an AMK document mapped by this
// package: task i of the program is $.tasks[i] (tasks keep their list
// order), step j of its Before list is its wait $.tasks[i].waits[j], and
// its one After step, the signal, is $.tasks[i].out_counter.
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
