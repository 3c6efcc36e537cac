package mpk_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/mpk"
)

// TestInvalid checks that malformed graphs yield the right invalid.* code
// at the right JSON path, and that what MPK's loader accepts is accepted.
func TestInvalid(t *testing.T) {
	set := func(path []any, v any) func(map[string]any) {
		return func(d map[string]any) {
			obj(d, path[:len(path)-1]...)[path[len(path)-1].(string)] = v
		}
	}
	raw := func(s string) func(testing.TB) []byte { return func(testing.TB) []byte { return []byte(s) } }
	cases := []struct {
		name string
		data func(testing.TB) []byte
		file string
		edit func(map[string]any)
		opts mpk.Options
		code string // "" means accepted
		path string
		msg  string // a substring of the message
	}{
		{name: "not JSON", data: raw(`{"all_events": [`), code: schedule.CodeSyntax},
		{name: "trailing data", data: raw(`{"all_events": [], "all_tasks": []} x`), code: schedule.CodeSyntax},
		{name: "duplicate key", data: raw(`{"all_events": [], "all_events": [], "all_tasks": []}`), code: schedule.CodeDuplicate, path: "$.all_events"},
		{name: "not an object", data: raw(`[]`), code: schedule.CodeType, path: "$"},
		{name: "no tasks", data: raw(`{"all_events": []}`), code: schedule.CodeMissing, path: "$.all_tasks"},
		{name: "events not a list", file: ex1, edit: set([]any{"all_events"}, "x"), code: schedule.CodeType, path: "$.all_events"},
		{name: "task type a string", file: ex1, edit: set([]any{"all_tasks", 2, "task_type"}, "120"), code: schedule.CodeType, path: "$.all_tasks[2].task_type"},
		{name: "fractional offset", file: ex1, edit: set([]any{"all_tasks", 2, "outputs", 0, "offset"}, 1.5), code: schedule.CodeType, path: "$.all_tasks[2].outputs[0].offset"},
		{name: "integer beyond 64 bits", file: ex1, edit: set([]any{"all_tasks", 2, "trigger_event"}, json.Number("18446744073709551617")), code: schedule.CodeSize, path: "$.all_tasks[2].trigger_event"},
		{name: "missing trigger", file: ex1, edit: func(d map[string]any) { delete(obj(d, "all_tasks", 3), "trigger_event") }, code: schedule.CodeMissing, path: "$.all_tasks[3].trigger_event"},
		{name: "missing dims", file: ex1, edit: func(d map[string]any) { delete(obj(d, "all_tasks", 3, "inputs", 1), "dims") }, code: schedule.CodeMissing, path: "$.all_tasks[3].inputs[1].dims"},
		{name: "two events", file: ex1, edit: func(d map[string]any) { d["all_events"] = at(d, "all_events").([]any)[:2] }, code: schedule.CodeValue, path: "$.all_events"},
		{name: "event 0 not TERMINATION", file: ex1, edit: set([]any{"all_events", 0, "event_type"}, 900), code: schedule.CodeValue, path: "$.all_events[0].event_type"},
		{name: "launch event range", file: ex1, edit: set([]any{"all_events", 1, "last_task_id"}, 7), code: schedule.CodeValue, path: "$.all_events[1]"},
		{name: "launch event num_triggers", file: ex1, edit: set([]any{"all_events", 1, "num_triggers"}, 2), code: schedule.CodeValue, path: "$.all_events[1].num_triggers"},
		{name: "last event not END", file: ex1, edit: set([]any{"all_events", 3, "event_type"}, 900), code: schedule.CodeValue, path: "$.all_events[3].event_type"},
		{name: "END never fires", file: ex1, edit: set([]any{"all_events", 3, "num_triggers"}, 0), code: schedule.CodeValue, path: "$.all_events[3].num_triggers"},
		{name: "LAUNCH_TASKS event", file: ex1, edit: set([]any{"all_events", 2, "event_type"}, 901), code: schedule.CodeValue, path: "$.all_events[2].event_type", msg: "unsupported"},
		{name: "negative num_triggers", file: ex1, edit: set([]any{"all_events", 2, "num_triggers"}, -1), code: schedule.CodeSize, path: "$.all_events[2].num_triggers"},
		{name: "range beyond the tasks", file: ex1, edit: set([]any{"all_events", 2, "last_task_id"}, 9), code: schedule.CodeValue, path: "$.all_events[2].last_task_id"},
		{name: "task 0 not TERMINATE", file: ex1, edit: set([]any{"all_tasks", 0, "task_type"}, 121), code: schedule.CodeValue, path: "$.all_tasks[0].task_type"},
		{name: "BEGIN triggers END", file: ex1, edit: set([]any{"all_tasks", 1, "trigger_event"}, 3), code: schedule.CodeValue, path: "$.all_tasks[1].trigger_event"},
		{name: "a second BEGIN", file: ex1, edit: set([]any{"all_tasks", 3, "task_type"}, 10), code: schedule.CodeValue, path: "$.all_tasks[3].task_type"},
		{name: "unknown task type", file: ex1, edit: set([]any{"all_tasks", 3, "task_type"}, 7), code: schedule.CodeValue, path: "$.all_tasks[3].task_type"},
		{name: "NVSHMEM tile allreduce", file: ex1, edit: set([]any{"all_tasks", 3, "task_type"}, 302), code: schedule.CodeValue, path: "$.all_tasks[3].task_type", msg: "unsupported: task type 302 (NVSHMEM_TILE_ALLREDUCE)"},
		{name: "legacy allreduce", file: ex1, edit: set([]any{"all_tasks", 3, "task_type"}, 106), code: schedule.CodeValue, path: "$.all_tasks[3].task_type", msg: "multi-GPU"},
		{name: "NVSHMEM event", file: ex1, edit: set([]any{"all_tasks", 3, "trigger_event"}, mpk.NVSHMEMTag|1<<32|2), code: schedule.CodeValue, path: "$.all_tasks[3].trigger_event", msg: "NVSHMEM"},
		{name: "event of another GPU", file: ex1, edit: set([]any{"all_tasks", 6, "dependent_event"}, 1<<32|2), code: schedule.CodeValue, path: "$.all_tasks[6].dependent_event", msg: "belongs to GPU 1"},
		{name: "event beyond the list", file: ex1, edit: set([]any{"all_tasks", 6, "dependent_event"}, 4), code: schedule.CodeReference, path: "$.all_tasks[6].dependent_event"},
		{name: "negative event", file: ex1, edit: set([]any{"all_tasks", 6, "dependent_event"}, -2), code: schedule.CodeValue, path: "$.all_tasks[6].dependent_event"},
		{name: "task triggers the launch event", file: ex1, edit: set([]any{"all_tasks", 6, "trigger_event"}, 1), code: schedule.CodeValue, path: "$.all_tasks[6].trigger_event"},
		{name: "eight inputs", file: ex1, edit: func(d map[string]any) {
			in := at(d, "all_tasks", 2, "inputs").([]any)
			obj(d, "all_tasks", 2)["inputs"] = append(append(append(in, in...), in...), in...)
		}, code: schedule.CodeLimit, path: "$.all_tasks[2].inputs"},
		{name: "4-bit data type", file: ex1, edit: set([]any{"all_tasks", 2, "inputs", 1, "data_type"}, 920), code: schedule.CodeValue, path: "$.all_tasks[2].inputs[1].data_type", msg: "4-bit"},
		{name: "unknown data type", file: ex1, edit: set([]any{"all_tasks", 2, "inputs", 1, "data_type"}, 942), code: schedule.CodeValue, path: "$.all_tasks[2].inputs[1].data_type"},
		{name: "dims and strides differ", file: ex1, edit: set([]any{"all_tasks", 2, "inputs", 1, "strides"}, []any{1}), code: schedule.CodeValue, path: "$.all_tasks[2].inputs[1].strides"},
		{name: "rank 5", file: ex1, edit: func(d map[string]any) {
			x := obj(d, "all_tasks", 2, "inputs", 1)
			x["dims"], x["strides"] = []any{1, 1, 1, 1, 1}, []any{1, 1, 1, 1, 1}
		}, code: schedule.CodeLimit, path: "$.all_tasks[2].inputs[1].dims"},
		{name: "empty dimension", file: ex1, edit: set([]any{"all_tasks", 2, "inputs", 1, "dims"}, []any{0, 1024}), code: schedule.CodeEmptyAccess, path: "$.all_tasks[2].inputs[1].dims[0]"},
		{name: "negative stride", file: ex1, edit: set([]any{"all_tasks", 2, "inputs", 1, "strides"}, []any{-1024, 1}), code: schedule.CodeSize, path: "$.all_tasks[2].inputs[1].strides[0]"},
		{name: "offset beyond 2^50", file: ex1, edit: set([]any{"all_tasks", 2, "inputs", 1, "offset"}, int64(1)<<51), code: schedule.CodeSize, path: "$.all_tasks[2].inputs[1].offset"},
		{name: "empty name", file: ex1, edit: set([]any{"all_tasks", 2, "inputs", 1, "base_ptr"}, ""), code: schedule.CodeName, path: "$.all_tasks[2].inputs[1].base_ptr"},
		{name: "nullptr with dims", file: ex1, edit: set([]any{"all_tasks", 2, "inputs", 1, "base_ptr"}, "nullptr"), code: schedule.CodeValue, path: "$.all_tasks[2].inputs[1]"},
		{name: "BEGIN with tensors", file: ex1, edit: func(d map[string]any) { obj(d, "all_tasks", 1)["inputs"] = at(d, "all_tasks", 2, "inputs") }, code: schedule.CodeValue, path: "$.all_tasks[1]"},
		{name: "first task out of range", file: ex1, edit: set([]any{"first_tasks"}, []any{2, 8}), code: schedule.CodeReference, path: "$.first_tasks[1]"},
		{name: "first task twice", file: ex1, edit: set([]any{"first_tasks"}, []any{2, 2}), code: schedule.CodeDuplicate, path: "$.first_tasks[1]"},
		{name: "bad option", file: ex1, opts: mpk.Options{Iterations: -1}, code: schedule.CodeValue, path: "Options.Iterations"},
		{name: "residency with dynamic dispatch", file: ex1, opts: mpk.Options{Dispatch: mpk.Dynamic, Residency: mpk.Exclusive}, code: schedule.CodeValue, path: "Options.Residency"},

		// What MPK's loader accepts.
		{name: "unknown keys", file: ex1, edit: func(d map[string]any) { d["version"] = 3; obj(d, "all_tasks", 2)["note"] = "x" }},
		{name: "metadata missing (files before #614)", file: ex1, edit: func(d map[string]any) {
			for _, tn := range at(d, "all_tasks").([]any) {
				delete(tn.(map[string]any), "task_offset")
				delete(tn.(map[string]any), "variant_id")
			}
		}},
		{name: "metadata null", file: ex1, edit: set([]any{"all_tasks", 4, "kv_idx"}, nil)},
		{name: "empty lists for null", file: ex1, edit: func(d map[string]any) { obj(d, "all_tasks", 0)["inputs"] = []any{}; d["first_tasks"] = nil }},
		{name: "absent tensor", file: ex1, edit: func(d map[string]any) {
			x := obj(d, "all_tasks", 2)
			x["inputs"] = append(x["inputs"].([]any), map[string]any{"base_ptr": "nullptr", "data_type": 999, "dims": []any{}, "offset": 0, "strides": []any{}})
		}},
		{name: "escaped name", file: ex1, edit: set([]any{"all_tasks", 2, "outputs", 0, "base_ptr"}, "y\u00e9\n")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			switch {
			case tc.data != nil:
				data = tc.data(t)
			case tc.edit != nil:
				data = edit(t, tc.file, tc.edit)
			default:
				data = read(t, tc.file)
			}
			p, err := tc.opts.Unmarshal(data)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if err := p.Validate(); err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *schedule.Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a *schedule.Error", err)
			}
			d := se.Diagnostics[0]
			if d.Code != tc.code || (tc.path != "" && d.Path != tc.path) || !strings.Contains(d.Message, tc.msg) {
				t.Errorf("got %v; want %s at %s containing %q", se, tc.code, tc.path, tc.msg)
			}
		})
	}
}
