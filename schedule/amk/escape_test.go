package amk_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/megaproof/megaproof/internal/jsontest"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/amk"
)

// An AMK document whose keys and strings are all escapes is detected and
// read as the same program, through the fast task reader and the tree
// alike.
func TestEscapedDocuments(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no AMK documents: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := amk.Unmarshal(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		esc := escaped(t, data)
		if !amk.Detect(esc) {
			t.Fatalf("%s escaped: not detected as AMK", file)
		}
		got, err := amk.Unmarshal(esc)
		if err != nil {
			t.Fatalf("%s escaped: %v", file, err)
		}
		if !cmp.Equal(want, got, cmpopts.EquateEmpty()) {
			t.Errorf("%s escaped reads differently:\n%s", file, cmp.Diff(want, got, cmpopts.EquateEmpty()))
		}
	}
}

// A key repeated with an escape in one spelling is a duplicate: a reader
// that took the empty spelling's value would drop a task's wait.
func TestEscapedDuplicateKeys(t *testing.T) {
	for file, path := range map[string]string{
		"escaped_duplicate_waits.json":     "$.tasks[1].waits",
		"escaped_duplicate_threshold.json": "$.tasks[1].waits[0].threshold",
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "hostile", file))
		if err != nil {
			t.Fatal(err)
		}
		_, err = amk.Unmarshal(data)
		var se *schedule.Error
		if !errors.As(err, &se) || se.Diagnostics[0].Code != schedule.CodeDuplicate || se.Diagnostics[0].Path != path {
			t.Errorf("%s: %v, want invalid.duplicate at %s", file, err, path)
		}
	}
}

// escaped is jsontest.EscapeAll, failing the test on a document it
// cannot read.
func escaped(t *testing.T, data []byte) []byte {
	t.Helper()
	out, err := jsontest.EscapeAll(data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
