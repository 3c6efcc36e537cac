package amk_test

import (
	"testing"

	"github.com/megaproof/megaproof/internal/jsontest"
	"github.com/megaproof/megaproof/schedule/amk"
)

// An AMK document whose keys and strings are all escapes is detected and
// read as the same program, through the fast task reader and the tree
// alike.
func TestEscapedDocuments(t *testing.T) {
	jsontest.SameWhenEscaped(t, "testdata/*.json", jsontest.Reader{Detect: amk.Detect, Unmarshal: amk.Unmarshal})
}

// A key repeated with an escape in one spelling is a duplicate: a reader
// that took the empty spelling's value would drop a task's wait.
func TestEscapedDuplicateKeys(t *testing.T) {
	jsontest.DuplicateAt(t, "testdata/hostile", map[string]string{
		"escaped_duplicate_waits.json":     "$.tasks[1].waits",
		"escaped_duplicate_threshold.json": "$.tasks[1].waits[0].threshold",
	}, amk.Unmarshal)
}
