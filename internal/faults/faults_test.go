package faults_test

import (
	"testing"

	"github.com/megaproof/megaproof/internal/faults"
)

func TestVariants(t *testing.T) {
	vs := faults.Variants()
	if len(vs) < 23 {
		t.Fatalf("%d variants, want at least 23", len(vs))
	}
	seen := map[string]bool{}
	for i, in := range vs {
		if in.Variant != faults.Variant(i+1) {
			t.Errorf("variant %d is listed at %d", in.Variant, i)
		}
		if in.Name == "" || in.Doc == "" || in.Where == "" || seen[in.Name] {
			t.Errorf("variant %d: name %q, doc %q, where %q (duplicate: %v)", i+1, in.Name, in.Doc, in.Where, seen[in.Name])
		}
		seen[in.Name] = true
		if v, ok := faults.Lookup(in.Name); !ok || v != in.Variant || v.String() != in.Name {
			t.Errorf("Lookup(%q) = %v, %v", in.Name, v, ok)
		}
	}
	if _, ok := faults.Lookup("no-such-variant"); ok {
		t.Error("Lookup of an unknown name succeeded")
	}
}
