package sendpool

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// cpuGauge says whether the process has been using nearly all the CPU the
// runtime may use (GOMAXPROCS cores), by a moving average of windows of at
// least cpuWindow, and how many senders the pool may still add in the
// current window.
type cpuGauge struct {
	read func() (time.Duration, bool) // the CPU time used so far
	at   time.Time
	used time.Duration
	// load is the share of GOMAXPROCS cores used: a moving average of
	// the windows measured.
	load float64
	full bool
	// started: a window is being measured; measured: one has been.
	started, measured bool
	granted           int // senders added in the current window
}

const (
	cpuWindow = 10 * time.Millisecond
	// cpuSmoothing is the time constant of the load's moving average.
	cpuSmoothing = 50 * time.Millisecond
	// cpuFull is the share of GOMAXPROCS cores at which the process is
	// taken to be short of CPU: about what a generator sending 40,000
	// requests/s on one core used with a pool of a few dozen senders.
	cpuFull = 0.75
	// cpuSpare is the share under which the process has CPU to spare.
	cpuSpare = 0.5
)

// spare reports whether the process has CPU to spare: it used under
// cpuSpare of it, by the load's moving average (false before a window has
// been measured).
func (c *cpuGauge) spare() bool {
	return c.measured && c.load < cpuSpare
}

// begin starts the first window at now.
func (c *cpuGauge) begin(now time.Time) {
	if used, ok := c.read(); ok {
		c.at, c.used, c.started = now, used, true
	}
}

// busy reports whether the process has been using nearly all its CPU
// (measuring a window again once the last is cpuWindow long).
func (c *cpuGauge) busy(now time.Time) bool {
	if c.started && now.Sub(c.at) < cpuWindow {
		return c.full
	}
	used, ok := c.read()
	if !ok {
		return false
	}
	c.measure(now, used, runtime.GOMAXPROCS(0))
	return c.full
}

// measure ends the window at now, the process having used used CPU in all
// (of procs cores), and starts the next.
func (c *cpuGauge) measure(now time.Time, used time.Duration, procs int) {
	if c.started {
		// The load of one window swings by ±0.2 around a mean of 0.8 at
		// 40,000 requests/s; smoothed over cpuSmoothing it does not, and
		// the pool no longer grows in every window that read low.
		w := now.Sub(c.at)
		load := float64(used-c.used) / (float64(procs) * float64(w))
		a := 1.0
		if c.measured {
			a = min(1, float64(w)/float64(cpuSmoothing))
		}
		c.load += a * (load - c.load)
		c.full, c.measured = c.load >= cpuFull, true
	}
	c.at, c.used, c.started, c.granted = now, used, true, 0
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
