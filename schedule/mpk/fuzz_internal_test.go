package mpk

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func seeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// FuzzParse checks the direct scanner against the tree reader: whatever
// the scanner accepts, the tree reader accepts with the same Graph, and
// every graph either reads survives Marshal and Parse. Seeds: the
// testdata graphs and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		Detect(data)
		g, ok := parseDirect(data)
		tg, err := parseTree(data)
		if ok {
			if err != nil {
				t.Fatalf("the scanner accepts what the tree reader rejects: %v", err)
			}
			if !cmp.Equal(g, tg) {
				t.Fatalf("scanner and tree reader differ:\n%s", cmp.Diff(tg, g))
			}
		}
		if err != nil {
			return
		}
		back, err := Parse(Marshal(tg))
		if err != nil {
			t.Fatalf("Marshal output does not parse: %v", err)
		}
		if !cmp.Equal(tg, back) {
			t.Fatalf("Marshal round trip differs:\n%s", cmp.Diff(tg, back))
		}
	})
}
