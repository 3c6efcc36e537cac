package schedule

import "strconv"

// Locator gives the JSON paths of a program's tasks and steps in the
// document it was read from, in that document's own format, for findings
// that point into it. A path is "" where the document has no element of
// its own for what is asked (a step the reader implied).
type Locator interface {
	// TaskPath is the path of task i of Program.Tasks, e.g. "$.tasks[12]".
	TaskPath(task int) string
	// StepPath is the path of step j of a task's Before list (after false)
	// or After list (after true), e.g. "$.tasks[12].before[0]".
	StepPath(task int, after bool, step int) string
}

// DataLocator is a [Locator] that also locates a program's buffers, its
// tasks' accesses and its launch in the document.
type DataLocator interface {
	Locator
	// BufferPath is the path of buffer b of Program.Buffers.
	BufferPath(b int) string
	// AccessPath is the path of access k of a task's Reads (write false)
	// or Writes (write true).
	AccessPath(task int, write bool, k int) string
	// LaunchPath is the path of the launch.
	LaunchPath() string
}

// Paths is the [Locator] (a [DataLocator]) of the megaproof/v1 form: task i is $.tasks[i]
// and its steps are $.tasks[i].before[j] and $.tasks[i].after[j], as
// [Decode] reads them and [Encode] writes them; buffers are
// $.buffers[b], accesses $.tasks[i].reads[k] and $.tasks[i].writes[k], the
// launch $.launch. A program from a
// [Builder] is located in its [Marshal] form.
type Paths struct{}

// TaskPath returns "$.tasks[i]".
func (Paths) TaskPath(task int) string { return taskPath(task) }

// StepPath returns "$.tasks[i].before[j]" or "$.tasks[i].after[j]".
func (Paths) StepPath(task int, after bool, step int) string {
	list := ".before["
	if after {
		list = ".after["
	}
	return taskPath(task) + list + strconv.Itoa(step) + "]"
}

// BufferPath returns "$.buffers[b]".
func (Paths) BufferPath(b int) string { return "$.buffers[" + strconv.Itoa(b) + "]" }

// AccessPath returns "$.tasks[i].reads[k]" or "$.tasks[i].writes[k]".
func (Paths) AccessPath(task int, write bool, k int) string {
	list := ".reads["
	if write {
		list = ".writes["
	}
	return taskPath(task) + list + strconv.Itoa(k) + "]"
}

// LaunchPath returns "$.launch".
func (Paths) LaunchPath() string { return "$.launch" }

func taskPath(task int) string { return "$.tasks[" + strconv.Itoa(task) + "]" }

// StepSource returns where operation s of thread th comes from: its task,
// and the index of the step in the task's Before list (after false) or
// After list (after true) that lowered to it, or step -1 for the Begin and
// End of the body. A barrier Sync lowers to two operations, Arrive and
// Await, with the same step. ok is false for an operation f does not have.
func (f *Form) StepSource(p *Program, th, s int) (task int, after bool, step int, ok bool) {
	if th < 0 || th >= len(f.Threads) || s < 0 || s >= len(f.Threads[th].Ops) {
		return 0, false, 0, false
	}
	ops := f.Threads[th].Ops
	task = int(ops[s].Task)
	if task < 0 || task >= len(p.Tasks) {
		return 0, false, 0, false
	}
	first := s // the task's first operation: a task's operations are contiguous
	for first > 0 && int(ops[first-1].Task) == task {
		first--
	}
	k := s - first
	t := &p.Tasks[task]
	for j, st := range t.Before {
		n := 1
		if st.Kind == Sync {
			n = 2
		}
		if k < n {
			return task, false, j, true
		}
		k -= n
	}
	if k < 2 {
		return task, false, -1, true
	}
	k -= 2
	for j, st := range t.After {
		n := 1
		if st.Kind == Sync {
			n = 2
		}
		if k < n {
			return task, true, j, true
		}
		k -= n
	}
	return 0, false, 0, false
}
