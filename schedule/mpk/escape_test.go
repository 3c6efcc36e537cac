package mpk_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/megaproof/megaproof/internal/jsontest"
	"github.com/megaproof/megaproof/schedule/mpk"
)

// An MPK graph whose keys and strings are all escapes is detected and
// mapped to the same program as the plain one.
func TestEscapedDocuments(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no MPK graphs: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := mpk.Unmarshal(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		esc, err := jsontest.EscapeAll(data)
		if err != nil {
			t.Fatal(err)
		}
		if !mpk.Detect(esc) {
			t.Fatalf("%s escaped: not detected as MPK", file)
		}
		got, err := mpk.Unmarshal(esc)
		if err != nil {
			t.Fatalf("%s escaped: %v", file, err)
		}
		if !cmp.Equal(want, got, cmpopts.EquateEmpty()) {
			t.Errorf("%s escaped maps differently:\n%s", file, cmp.Diff(want, got, cmpopts.EquateEmpty()))
		}
	}
}
