package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/verify"
)

// Findings on AutoMegaKernel and MPK inputs are located in those
// documents: every location and every event's path resolves there, in the
// format's own structure.
func TestLocationsInInputFormats(t *testing.T) {
	// AMK: the spec's two-task example with its one wait dropped.
	var amkDoc map[string]any
	b, err := os.ReadFile("../../schedule/amk/testdata/ir_spec.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &amkDoc); err != nil {
		t.Fatal(err)
	}
	amkDoc["tasks"].([]any)[1].(map[string]any)["waits"] = []any{}
	racy, _ := json.Marshal(amkDoc)
	mpkDoc, err := os.ReadFile(mpkExample("ex4_stripped_residual_hazard.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, prefix string
		doc          []byte
	}{
		{"amk", "$.tasks[", racy},
		{"mpk", "$.all_tasks[", mpkDoc},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := verifyBytes(t, c.doc)
			if r.Verdict != verify.Unsafe || r.Format != c.name {
				t.Fatalf("verdict %s, format %q", r.Verdict, r.Format)
			}
			var tree any
			json.Unmarshal(c.doc, &tree)
			located, paths := 0, 0
			for _, f := range r.Findings {
				for _, l := range f.Locations {
					located++
					if !strings.HasPrefix(l.Path, c.prefix) || !resolvePath(tree, l.Path) {
						t.Errorf("%s: location %+v does not resolve", f.Code, l)
					}
				}
				for _, e := range f.Witness {
					if e.Path == "" {
						continue
					}
					paths++
					if !resolvePath(tree, e.Path) {
						t.Errorf("%s: event path %s does not resolve", f.Code, e.Path)
					}
				}
			}
			if located == 0 || paths == 0 {
				t.Errorf("%d locations and %d event paths: want some of each", located, paths)
			}
		})
	}
}

// resolvePath reports whether a JSON path of the readers' form
// ($.a[1].b) names a value of the decoded document.
func resolvePath(v any, path string) bool {
	rest, ok := strings.CutPrefix(path, "$")
	if !ok {
		return false
	}
	for rest != "" {
		switch rest[0] {
		case '.':
			end := strings.IndexAny(rest[1:], ".[")
			if end < 0 {
				end = len(rest) - 1
			}
			o, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if v, ok = o[rest[1:1+end]]; !ok {
				return false
			}
			rest = rest[1+end:]
		case '[':
			end := strings.IndexByte(rest, ']')
			i, err := strconv.Atoi(rest[1:max(1, end)])
			a, ok := v.([]any)
			if end < 0 || err != nil || !ok || i < 0 || i >= len(a) {
				return false
			}
			v, rest = a[i], rest[end+1:]
		default:
			return false
		}
	}
	return true
}
