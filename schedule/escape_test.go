package schedule_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/megaproof/megaproof/internal/jsontest"
	"github.com/megaproof/megaproof/schedule"
)

// A document whose keys and strings are all escapes reads as the same
// program, through the fast reader and the tree alike.
func TestEscapedDocuments(t *testing.T) {
	files, err := filepath.Glob("../verify/testdata/codes/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example programs: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := schedule.Unmarshal(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		got, err := schedule.Unmarshal(escaped(t, data))
		if err != nil {
			t.Fatalf("%s escaped: %v", file, err)
		}
		if !cmp.Equal(want, got, cmpopts.EquateEmpty()) {
			t.Errorf("%s escaped reads differently:\n%s", file, cmp.Diff(want, got, cmpopts.EquateEmpty()))
		}
	}
}

// A key repeated with an escape in one spelling is a duplicate like any
// other: a reader that took one spelling's value could drop a wait or
// widen a scope.
func TestEscapedDuplicateKeys(t *testing.T) {
	for file, path := range map[string]string{
		"escaped_duplicate_before.json": "$.tasks[1].before",
		"escaped_duplicate_scope.json":  "$.tasks[1].before[0].scope",
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "hostile", file))
		if err != nil {
			t.Fatal(err)
		}
		_, err = schedule.Unmarshal(data)
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
