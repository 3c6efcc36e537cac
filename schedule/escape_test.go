package schedule_test

import (
	"testing"

	"github.com/megaproof/megaproof/internal/jsontest"
	"github.com/megaproof/megaproof/schedule"
)

// A document whose keys and strings are all escapes reads as the same
// program, through the fast reader and the tree alike.
func TestEscapedDocuments(t *testing.T) {
	jsontest.SameWhenEscaped(t, "../verify/testdata/codes/*.json", jsontest.Reader{Unmarshal: schedule.Unmarshal})
}

// A key repeated with an escape in one spelling is a duplicate like any
// other: a reader that took one spelling's value could drop a wait or
// widen a scope.
func TestEscapedDuplicateKeys(t *testing.T) {
	jsontest.DuplicateAt(t, "testdata/hostile", map[string]string{
		"escaped_duplicate_before.json": "$.tasks[1].before",
		"escaped_duplicate_scope.json":  "$.tasks[1].before[0].scope",
	}, schedule.Unmarshal)
}
