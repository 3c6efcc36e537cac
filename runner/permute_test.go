package runner

import (
	"strings"
	"testing"
)

// Permuting the workers is refused exactly where it would break the
// model's index-order residency: a launch that is not cooperative, with
// more workers than are resident.
func TestPermuteRefusal(t *testing.T) {
	for _, c := range []struct {
		permute, coop       bool
		workers, perSM, sms int
		refused             bool
	}{
		{false, false, 300, 2, 132, false},
		{true, true, 300, 2, 132, false},
		{true, false, 264, 2, 132, false},
		{true, false, 265, 2, 132, true},
		{true, false, 1, 0, 132, true},
	} {
		err := permuteRefusal(c.permute, c.coop, c.workers, c.perSM, c.sms)
		if (err != nil) != c.refused {
			t.Errorf("%+v: %v", c, err)
		}
		if err != nil && !strings.Contains(err.Error(), "Permute on a launch that is not cooperative") {
			t.Errorf("%+v: message %q", c, err)
		}
	}
}
