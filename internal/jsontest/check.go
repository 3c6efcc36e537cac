package jsontest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/megaproof/megaproof/schedule"
)

// Reader is a format's reader under test: its content detection (nil for
// a format that has none) and the program it reads from a document.
type Reader struct {
	Detect    func([]byte) bool
	Unmarshal func([]byte) (*schedule.Program, error)
}

// SameWhenEscaped requires every file of the glob pattern to read, and to
// be detected and read as the same program once [EscapeAll] has written
// its keys and strings as escapes.
func SameWhenEscaped(t *testing.T, pattern string, r Reader) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no documents match %s: %v", pattern, err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := r.Unmarshal(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		esc, err := EscapeAll(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if r.Detect != nil && !r.Detect(esc) {
			t.Fatalf("%s escaped: not detected", file)
		}
		got, err := r.Unmarshal(esc)
		if err != nil {
			t.Fatalf("%s escaped: %v", file, err)
		}
		if !cmp.Equal(want, got, cmpopts.EquateEmpty()) {
			t.Errorf("%s escaped reads differently:\n%s", file, cmp.Diff(want, got, cmpopts.EquateEmpty()))
		}
	}
}

// DuplicateAt requires each file of dir to be refused with an
// invalid.duplicate diagnostic first, at the JSON path paths gives it.
func DuplicateAt(t *testing.T, dir string, paths map[string]string, unmarshal func([]byte) (*schedule.Program, error)) {
	t.Helper()
	for file, path := range paths {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		_, err = unmarshal(data)
		var se *schedule.Error
		if !errors.As(err, &se) || se.Diagnostics[0].Code != schedule.CodeDuplicate || se.Diagnostics[0].Path != path {
			t.Errorf("%s: %v, want invalid.duplicate at %s", file, err, path)
		}
	}
}
