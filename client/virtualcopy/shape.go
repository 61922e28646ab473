package virtualcopy

import (
	"fmt"

	"github.com/loadlab/loadlab/client/probe"
)

// rateLimited makes c a token bucket at the probe's plateau in front of
// workers enough for every user the probe ran, with an unbounded queue:
// refusals that were 429s with no waiting before them are a rate limit's.
func (c *Copy) rateLimited(r probe.Result, steps []probe.Step, o Options) {
	burst := o.Burst
	if burst < 1 {
		burst = 1
		c.say("burst: not in the data (a closed probe spends tokens as they come): 1 (--burst)")
	} else {
		c.say("burst: %d, as given", burst)
	}
	c.Rate = &Rate{PerSecond: r.PlateauPerSecond, Burst: burst, Status: c.RejectStatus, RetryAfter: c.RetryAfter}
	c.say("a rate limit: refusals (%d) began at concurrency %d with no waiting before them; %.4g calls a second, the plateau",
		c.RejectStatus, *r.RejectionsBeginAt, r.PlateauPerSecond)
	c.Workers, c.Queue, c.RejectStatus = steps[len(steps)-1].Concurrency, -1, 503
	c.say("workers: no worker limit showed below the rate: %d (the probe's highest concurrency), queue unbounded", c.Workers)
}

// station makes c a station: workers by Little's law at the knee (the
// plateau × the knee step's mean latency: the requests in service when
// every worker is busy), queue slots between them and the first refusal,
// the service time's growth with the requests in service below the knee.
func (c *Copy) station(r probe.Result, steps []probe.Step, low probe.Step, o Options) error {
	switch {
	case o.Workers != nil:
		c.Workers = *o.Workers
		c.say("workers: %d, as given", c.Workers)
	case r.Knee == nil:
		return fmt.Errorf("the probe reached no plateau up to concurrency %d (%s): the workers are not in the data; give --workers %s=N",
			steps[len(steps)-1].Concurrency, r.KneeReason, c.Name)
	default:
		k := stepAt(steps, *r.Knee)
		if k.MeanSeconds == nil {
			return fmt.Errorf("the knee's step (concurrency %d) measured no latency", *r.Knee)
		}
		mean := *k.MeanSeconds
		c.Workers = round(r.PlateauPerSecond * mean)
		c.say("workers: %d, the plateau %.4g/s × the mean latency %s at the knee (concurrency %d)", c.Workers, r.PlateauPerSecond, ms(mean), *r.Knee)
	}
	if err := c.queue(r, steps, o); err != nil {
		return err
	}
	c.slowdown(steps, low, r)
	return nil
}

// queue sets c's queue slots: between its workers and the first refusal,
// or as given when the probe saw none.
func (c *Copy) queue(r probe.Result, steps []probe.Step, o Options) error {
	switch {
	case o.Queue != nil:
		c.Queue = *o.Queue
		if c.RejectStatus == 0 {
			c.RejectStatus = 503
		}
		c.say("queue: %d, as given (refusals answer %d)", c.Queue, c.RejectStatus)
		return nil
	case r.RejectionsBeginAt == nil:
		return fmt.Errorf("the probe saw no refusal up to concurrency %d: the queue limit is not in the data; give --queue %s=N (-1: unbounded)",
			steps[len(steps)-1].Concurrency, c.Name)
	}
	at := *r.RejectionsBeginAt
	c.Queue = max(0, at-1-c.Workers)
	below := 0 // the highest step probed below the first refusal
	for _, s := range steps {
		if s.Concurrency < at {
			below = s.Concurrency
		}
	}
	if below < at-1 {
		c.say("queue: %d, refusals beginning at concurrency %d, after %d workers; steps %d to %d were not probed, so any queue from %d to %d agrees",
			c.Queue, at, c.Workers, below+1, at-1, max(0, below-c.Workers), c.Queue)
	} else {
		c.say("queue: %d, refusals beginning at concurrency %d, after %d workers", c.Queue, at, c.Workers)
	}
	if c.RetryAfter > 0 {
		c.say("refusals: %d with Retry-After %v, as the original's", c.RejectStatus, c.RetryAfter)
	} else {
		c.say("refusals: %d, as the original's (no Retry-After)", c.RejectStatus)
	}
	return nil
}

// slowdown sets how c's service time grows with the requests in service,
// from the median latencies of the steps up to its workers (where none
// waits), when they grew past GrowthSeen.
func (c *Copy) slowdown(steps []probe.Step, low probe.Step, r probe.Result) {
	var ns []int
	var fs []float64
	for _, s := range steps {
		if s.Concurrency <= c.Workers && s.P50Seconds != nil && (r.RejectionsBeginAt == nil || s.Concurrency < *r.RejectionsBeginAt) {
			ns, fs = append(ns, s.Concurrency), append(fs, *s.P50Seconds / *low.P50Seconds)
		}
	}
	top := 1.0
	for _, f := range fs {
		top = max(top, f)
	}
	if top <= GrowthSeen {
		c.say("service time: the same at every concurrency up to %d (medians within %.0f%% of the lowest step's)", c.Workers, 100*(GrowthSeen-1))
		return
	}
	c.Slowdown = make([]float64, c.Workers)
	for n := 1; n <= c.Workers; n++ {
		c.Slowdown[n-1] = max(1, interpolate(ns, fs, n))
	}
	c.say("service time: grows with the requests in service, ×%.3g at %d (the steps' median latencies below the knee)", c.Slowdown[c.Workers-1], c.Workers)
}

// interpolate is f at n, linear between the points (ns increasing), the
// nearest end's value outside them.
func interpolate(ns []int, fs []float64, n int) float64 {
	switch {
	case len(ns) == 0:
		return 1
	case n <= ns[0]:
		return fs[0]
	case n >= ns[len(ns)-1]:
		return fs[len(fs)-1]
	}
	for i := 1; i < len(ns); i++ {
		if n <= ns[i] {
			t := float64(n-ns[i-1]) / float64(ns[i]-ns[i-1])
			return fs[i-1] + t*(fs[i]-fs[i-1])
		}
	}
	return fs[len(fs)-1]
}

// stepAt is the step at concurrency n.
func stepAt(steps []probe.Step, n int) probe.Step {
	for _, s := range steps {
		if s.Concurrency == n {
			return s
		}
	}
	return probe.Step{}
}
