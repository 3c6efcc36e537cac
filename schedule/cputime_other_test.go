//go:build !unix

package schedule_test

import "time"

// cpuTime is not measured here.
func cpuTime() (time.Duration, bool) { return 0, false }
