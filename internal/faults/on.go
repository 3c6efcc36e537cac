//go:build megaproof_faults

package faults

import "fmt"

// Enabled reports whether this build can switch variants on (the
// megaproof_faults tag).
const Enabled = true

// active is the variant switched on. It is set between analyses, never
// during one, so the analyses' goroutines read it without races.
var active Variant

// On reports whether variant v is the one switched on.
func On(v Variant) bool { return v != None && v == active }

// Set switches variant v on (None: the correct verifier). Call it only
// while no analysis runs.
func Set(v Variant) error {
	if v >= numVariants {
		return fmt.Errorf("faults: no variant %d", v)
	}
	active = v
	return nil
}
