package sendpool

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// cpuGauge says whether the process has been using nearly all the CPU the
// runtime may use (GOMAXPROCS cores) over its last window, and how many
// senders the pool may still add in the current one.
type cpuGauge struct {
	at      time.Time
	used    time.Duration
	full    bool
	started bool
	granted int // senders added in the current window
}

const (
	cpuWindow = 10 * time.Millisecond
	// cpuFull is the share of GOMAXPROCS cores at which the process is
	// taken to be short of CPU: about what a generator sending 40,000
	// requests/s on one core used with a pool of a few dozen senders.
	cpuFull = 0.75
)

// busy reports whether the process used nearly all its CPU over the
// window since it was last asked (measuring again once that is cpuWindow
// long).
func (c *cpuGauge) busy(now time.Time) bool {
	if c.started && now.Sub(c.at) < cpuWindow {
		return c.full
	}
	used, ok := processCPU()
	if !ok {
		return false
	}
	if c.started {
		c.full = float64(used-c.used) >= cpuFull*float64(runtime.GOMAXPROCS(0))*float64(now.Sub(c.at))
	}
	c.at, c.used, c.started, c.granted = now, used, true, 0
	return c.full
}

// allowance is how many senders the pool may still add in the current
// window: an eighth of the pool, at least one (maxDials when urgent), so
// that it grows by steps whose cost the next window measures (by up to
// 1.125× a window: from 32 senders to 4,000 in about 40 windows, 0.4 s).
func (c *cpuGauge) allowance(senders int, urgent bool, maxDials int) int {
	floor := 1
	if urgent {
		floor = maxDials
	}
	return max(floor, senders/8) - c.granted
}

// runnable is how many goroutines are ready to run and waiting for a CPU
// (the runtime's approximate count, of every goroutine of the process).
func runnable() int {
	s := []metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int(s[0].Value.Uint64())
}
