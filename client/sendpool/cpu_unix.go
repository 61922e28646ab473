//go:build unix

package sendpool

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, user and system, and
// whether it could be read.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
