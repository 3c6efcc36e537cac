package schedule_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// TestOnePass requires a document's problems to be reported together: what
// the reader finds and what Validate finds elsewhere, without the
// consequences of the reader's findings.
func TestOnePass(t *testing.T) {
	const head = `{"format":"megaproof/v1",`
	tests := []struct {
		name, doc string
		want      []diag
		reason    string
	}{
		{"type and worker", head + `"launch":{"sms":1,"workers":1},"buffers":[{"name":"x","kind":"scratch","size":"64"}],"counters":[{"name":"c"}],"tasks":[{"name":"t","worker":0,"before":[{"wait":"c","ge":0}]},{"name":"u","worker":5}]}`,
			[]diag{{schedule.CodeType, "$.buffers[0].size"}, {schedule.CodeThreshold, "$.tasks[0].before[0].ge"}, {schedule.CodeWorker, "$.tasks[1].worker"}}, "a type error does not hide a bad worker"},
		{"unknown field and worker", head + `"launch":{"sms":1,"workers":2},"tasks":[{"name":"t","worker":7,"reads":[{"buffer":"x","length":8}]}],"buffers":[{"name":"x","kind":"scratch","size":8,"bogus":1}]}`,
			[]diag{{schedule.CodeUnknownField, "$.buffers[0].bogus"}, {schedule.CodeWorker, "$.tasks[0].worker"}}, "nor does an unknown field"},
		{"reference, duplicate and worker", head + `"launch":{"sms":1,"workers":2},"buffers":[{"name":"x","kind":"scratch","size":8}],"tasks":[{"name":"t","worker":7},{"name":"t","worker":0,"after":[{"signal":"nope"}]}]}`,
			[]diag{{schedule.CodeReference, "$.tasks[1].after[0].signal"}, {schedule.CodeDuplicate, "$.tasks[1].name"}, {schedule.CodeWorker, "$.tasks[0].worker"}}, "each once"},
		{"launch", head + `"launch":{"sms":1,"workers":"2"},"tasks":[{"name":"t","worker":1},{"name":"u","worker":0}]}`,
			[]diag{{schedule.CodeType, "$.launch.workers"}}, "no worker is checked against a launch that was not read"},
		{"counter width", head + `"launch":{"sms":1,"workers":2},"counters":[{"name":"c","width":"64"}],"tasks":[{"name":"t","worker":1,"before":[{"wait":"c","ge":5000000000}]}]}`,
			[]diag{{schedule.CodeType, "$.counters[0].width"}}, "no threshold is checked against a width that was not read"},
		{"arena size", head + `"launch":{"sms":1,"workers":2},"arenas":[{"name":"a","size":"8"}],"buffers":[{"name":"x","kind":"scratch","size":8,"arena":"a","offset":4}],"tasks":[{"name":"t","worker":0}]}`,
			[]diag{{schedule.CodeType, "$.arenas[0].size"}}, "no placement is checked against an arena that was not read"},
		{"format", `{"format":"megaproof/v2","launch":{"sms":1,"workers":2},"tasks":[{"name":"t","worker":7}]}`,
			[]diag{{schedule.CodeFormat, "$.format"}}, "nothing else counts in another format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := schedule.Unmarshal([]byte(tt.doc))
			var se *schedule.Error
			if !errors.As(err, &se) {
				t.Fatalf("Unmarshal: %v", err)
			}
			var got []diag
			for _, d := range se.Diagnostics {
				got = append(got, diag{d.Code, d.Path})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("diagnostics %v\nwant %v (%s)", got, tt.want, tt.reason)
			}
		})
	}
}
