//go:build megaproof_faults

package faults_test

import (
	"testing"

	"github.com/megaproof/megaproof/internal/faults"
)

// TestOn: with the megaproof_faults tag exactly the variant set is on.
func TestOn(t *testing.T) {
	defer faults.Set(faults.None)
	for _, in := range faults.Variants() {
		if err := faults.Set(in.Variant); err != nil {
			t.Fatal(err)
		}
		for _, o := range faults.Variants() {
			if faults.On(o.Variant) != (o.Variant == in.Variant) {
				t.Errorf("with %s set, On(%s) = %v", in.Name, o.Name, faults.On(o.Variant))
			}
		}
	}
	if err := faults.Set(faults.None); err != nil || faults.On(faults.None) {
		t.Errorf("Set(None) = %v, On(None) = %v", err, faults.On(faults.None))
	}
}
