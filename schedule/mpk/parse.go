package mpk

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/megaproof/megaproof/internal/jsontree"
	"github.com/megaproof/megaproof/schedule"
)

// Parse reads an MPK task-graph file into a [Graph], checking the JSON
// syntax and every value's type; it does not check what the values mean
// (that is [Options.Map]'s part). Errors are a *[schedule.Error] of
// invalid.* diagnostics with JSON paths. It never panics.
//
// A document in the form MPK writes (integers, plain ASCII names, no
// unknown or repeated keys) is read by a direct scanner; any other goes
// through a general JSON tree, which accepts what MPK's loader accepts
// (unknown keys are ignored, missing metadata defaults to -1) and names
// the path of every problem. Both give the same Graph (FuzzParse).
func Parse(data []byte) (*Graph, error) {
	if g, ok := parseDirect(data); ok {
		return g, nil
	}
	return parseTree(data)
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack (MPK
// files nest five deep).
const maxDepth = 64

// maxDiagnostics caps the diagnostics one input can produce.
const maxDiagnostics = 50

// diags collects diagnostics.
type diags struct{ list []schedule.Diagnostic }

func (d *diags) add(code, path, format string, args ...any) {
	if len(d.list) < maxDiagnostics {
		d.list = append(d.list, schedule.Diagnostic{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
	}
}

func (d *diags) full() bool { return len(d.list) >= maxDiagnostics }

func (d *diags) err() error {
	if len(d.list) == 0 {
		return nil
	}
	return &schedule.Error{Diagnostics: d.list}
}

// parseTree reads any JSON document through jsontree, reporting every
// type problem with its path.
func parseTree(data []byte) (*Graph, error) {
	root, perr := jsontree.Parse(data, maxDepth)
	if perr != nil {
		code := schedule.CodeSyntax
		if perr.Kind == jsontree.Duplicate {
			code = schedule.CodeDuplicate
		}
		return nil, &schedule.Error{Diagnostics: []schedule.Diagnostic{{Code: code, Path: perr.Path, Message: perr.Message}}}
	}
	t := &tree{}
	g := t.graph(root)
	if err := t.err(); err != nil {
		return nil, err
	}
	return g, nil
}

type tree struct{ diags }

func field(n *jsontree.Node, key string) *jsontree.Node {
	for i, k := range n.Keys {
		if k == key {
			return n.Vals[i]
		}
	}
	return nil
}

func (t *tree) kind(n *jsontree.Node, want byte, path string) bool {
	if n.Kind != want {
		t.add(schedule.CodeType, path, "want %s, have %s", jsontree.KindNames[want], jsontree.KindNames[n.Kind])
		return false
	}
	return true
}

func (t *tree) required(n *jsontree.Node, path, key string) *jsontree.Node {
	v := field(n, key)
	if v == nil {
		t.add(schedule.CodeMissing, path+"."+key, "required field %q is missing", key)
	}
	return v
}

// integer reads a JSON integer that fits in an int64. A fraction or an
// exponent is a type error (MPK writes integers); an integer beyond int64
// is a size error.
func (t *tree) integer(n *jsontree.Node, path string) (int64, bool) {
	if n.Kind != 'n' {
		t.add(schedule.CodeType, path, "want an integer, have %s", jsontree.KindNames[n.Kind])
		return 0, false
	}
	v, err := strconv.ParseInt(n.Str, 10, 64)
	if err != nil {
		if isIntegerLit(n.Str) {
			t.add(schedule.CodeSize, path, "integer %s overflows 64 bits", n.Str)
		} else {
			t.add(schedule.CodeType, path, "want an integer, have %s", n.Str)
		}
		return 0, false
	}
	return v, true
}

// intField reads key of object n: required, or def when absent or null.
func (t *tree) intField(n *jsontree.Node, path, key string, required bool, def int64) int64 {
	v := field(n, key)
	if v == nil || (!required && v.Kind == 'z') {
		if required {
			t.add(schedule.CodeMissing, path+"."+key, "required field %q is missing", key)
		}
		return def
	}
	x, _ := t.integer(v, path+"."+key)
	return x
}

// ints reads a list of integers.
func (t *tree) ints(n *jsontree.Node, path string) []int64 {
	if !t.kind(n, 'a', path) {
		return nil
	}
	out := make([]int64, len(n.Vals))
	for i, v := range n.Vals {
		out[i], _ = t.integer(v, fmt.Sprintf("%s[%d]", path, i))
	}
	return out
}

func (t *tree) graph(root *jsontree.Node) *Graph {
	g := &Graph{}
	if !t.kind(root, 'o', "$") {
		return g
	}
	if v := t.required(root, "$", "all_events"); v != nil && t.kind(v, 'a', "$.all_events") {
		g.Events = make([]Event, len(v.Vals))
		for i, en := range v.Vals {
			t.event(en, fmt.Sprintf("$.all_events[%d]", i), &g.Events[i])
			if t.full() {
				return g
			}
		}
	}
	if v := t.required(root, "$", "all_tasks"); v != nil && t.kind(v, 'a', "$.all_tasks") {
		g.Tasks = make([]Task, len(v.Vals))
		for i, tn := range v.Vals {
			t.task(tn, fmt.Sprintf("$.all_tasks[%d]", i), &g.Tasks[i])
			if t.full() {
				return g
			}
		}
	}
	if v := field(root, "first_tasks"); v != nil && v.Kind != 'z' {
		g.FirstTasks = t.ints(v, "$.first_tasks")
		if g.FirstTasks == nil {
			g.FirstTasks = []int64{}
		}
	}
	return g
}

func (t *tree) event(n *jsontree.Node, path string, e *Event) {
	if !t.kind(n, 'o', path) {
		return
	}
	e.Type = t.intField(n, path, "event_type", true, 0)
	e.FirstTask = t.intField(n, path, "first_task_id", true, 0)
	e.LastTask = t.intField(n, path, "last_task_id", true, 0)
	e.NumTriggers = t.intField(n, path, "num_triggers", true, 0)
}

func (t *tree) task(n *jsontree.Node, path string, k *Task) {
	*k = Task{RequestID: -1, ExpertOffset: -1, KVIdx: -1, MergeTaskOffset: -1, TaskOffset: -1}
	if !t.kind(n, 'o', path) {
		return
	}
	k.DependentEvent = t.intField(n, path, "dependent_event", true, 0)
	k.ExpertOffset = t.intField(n, path, "expert_offset", false, -1)
	k.Inputs = t.tensors(n, path, "inputs")
	k.KVIdx = t.intField(n, path, "kv_idx", false, -1)
	k.MergeTaskOffset = t.intField(n, path, "merge_task_offset", false, -1)
	k.Outputs = t.tensors(n, path, "outputs")
	k.RequestID = t.intField(n, path, "request_id", false, -1)
	k.TaskOffset = t.intField(n, path, "task_offset", false, -1)
	k.Type = t.intField(n, path, "task_type", true, 0)
	k.TriggerEvent = t.intField(n, path, "trigger_event", true, 0)
	k.Variant = t.intField(n, path, "variant_id", false, 0)
}

// tensors reads a task's inputs or outputs: null (none) or a list.
func (t *tree) tensors(n *jsontree.Node, path, key string) []Tensor {
	v := t.required(n, path, key)
	if v == nil || v.Kind == 'z' {
		return nil
	}
	lp := path + "." + key
	if !t.kind(v, 'a', lp) {
		return nil
	}
	out := make([]Tensor, len(v.Vals))
	for i, tn := range v.Vals {
		tp := fmt.Sprintf("%s[%d]", lp, i)
		if !t.kind(tn, 'o', tp) {
			continue
		}
		x := &out[i]
		if b := t.required(tn, tp, "base_ptr"); b != nil && t.kind(b, 's', tp+".base_ptr") {
			x.BasePtr = b.Str
		}
		x.DataType = t.intField(tn, tp, "data_type", true, 0)
		if d := t.required(tn, tp, "dims"); d != nil {
			x.Dims = t.ints(d, tp+".dims")
		}
		x.Offset = t.intField(tn, tp, "offset", true, 0)
		if s := t.required(tn, tp, "strides"); s != nil {
			x.Strides = t.ints(s, tp+".strides")
		}
	}
	return out
}

// isIntegerLit reports whether a number's literal text is written as an
// integer (an optional minus and digits only), whatever its size.
func isIntegerLit(lit string) bool {
	lit = strings.TrimPrefix(lit, "-")
	if lit == "" {
		return false
	}
	for _, c := range lit {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
