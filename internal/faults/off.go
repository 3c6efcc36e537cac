//go:build !megaproof_faults

package faults

import "errors"

// Enabled reports whether this build can switch variants on (the
// megaproof_faults tag).
const Enabled = false

// On reports whether variant v is switched on: never, in this build.
func On(Variant) bool { return false }

// Set switches a variant on; without the megaproof_faults tag it fails
// (unless v is None).
func Set(v Variant) error {
	if v == None {
		return nil
	}
	return errors.New("faults: built without the megaproof_faults tag")
}
