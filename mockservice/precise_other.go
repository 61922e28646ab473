//go:build !linux

package mockservice

import "time"

// preciseSleep falls back to the runtime's timers where there is no
// clock_nanosleep to call.
func preciseSleep(d time.Duration) { time.Sleep(d) }
