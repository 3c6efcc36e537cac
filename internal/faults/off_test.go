//go:build !megaproof_faults

package faults_test

import (
	"testing"

	"github.com/megaproof/megaproof/internal/faults"
)

// TestOff: without the megaproof_faults tag no variant is ever on, and
// none can be set.
func TestOff(t *testing.T) {
	if faults.Enabled {
		t.Fatal("Enabled in a normal build")
	}
	for _, in := range faults.Variants() {
		if faults.Set(in.Variant) == nil {
			t.Errorf("Set(%s) succeeded in a normal build", in.Name)
		}
		if faults.On(in.Variant) {
			t.Errorf("%s is on in a normal build", in.Name)
		}
	}
	if err := faults.Set(faults.None); err != nil {
		t.Errorf("Set(None): %v", err)
	}
}
