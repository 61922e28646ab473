//go:build !unix

package sendpool

import "time"

// processCPU cannot be read here: the pool grows without regard to it.
func processCPU() (time.Duration, bool) { return 0, false }
