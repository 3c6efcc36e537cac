//go:build unix

package schedule_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used: on a
// loaded machine it counts the work done, not the time spent waiting for
// a core.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
