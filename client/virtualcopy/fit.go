// Package virtualcopy fits a virtual copy of a dependency from what a
// probe of it measured (the JSON of loadlab probe): the mock service's
// station — workers, a FIFO queue, refusal beyond — or a token bucket in
// front of unbounded workers, with service times drawn from the measured
// latency quantiles and, where the probe saw it, service time that grows
// with the requests in service. It reads nothing of the original but the
// probe, and it says what the probe could not tell and what it took
// instead. It is pure.
package virtualcopy

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/probe"
)

// The fit's rules, as factors.
const (
	// NoQueueing: a step whose median latency is within this factor of
	// the lowest step's showed no waiting: refusals that began with no
	// waiting before them are a rate limit's when they are 429s.
	NoQueueing = 1.10
	// GrowthSeen: a copy's service time grows with the requests in
	// service only when the probe's median latency below the knee grew by
	// more than this factor.
	GrowthSeen = 1.10
)

// Options are what the probe cannot tell, given by the user.
type Options struct {
	// Workers and Queue, when set, replace what the probe could not
	// measure: workers when it reached no plateau, queue slots when it saw
	// no rejection (-1: unbounded).
	Workers, Queue *int
	// Burst is a rate limit's burst (0: 1).
	Burst int
}

// Copy is a fitted copy of one dependency.
type Copy struct {
	Name, Method, Path string
	OKStatus           int
	// Workers, Queue (-1 unbounded) and RejectStatus are the station's;
	// RetryAfter the Retry-After its refusals carry (0: none).
	Workers, Queue, RejectStatus int
	RetryAfter                   time.Duration
	// Service is the latency distribution at ServiceConcurrency, the
	// probe's lowest step.
	Service            []probe.Quantile
	ServiceConcurrency int
	// Slowdown[n-1] multiplies the service time of a request that starts
	// with n in service; nil: none.
	Slowdown []float64
	// Rate, when set, refuses what exceeds it before the station.
	Rate *Rate
	// Said is, figure by figure, where each came from and what the probe
	// could not tell.
	Said []string
}

// Rate is a token bucket: PerSecond tokens a second, Burst at most,
// refusals with Status and Retry-After.
type Rate struct {
	PerSecond  float64
	Burst      int
	Status     int
	RetryAfter time.Duration
}

// Fit is the copy named name of the dependency r probed.
func Fit(name string, r probe.Result, o Options) (Copy, error) {
	c := Copy{Name: name, Method: r.Plan.Method, Path: "/", OKStatus: 200}
	if u, err := url.Parse(r.Plan.Target); err == nil && u.Path != "" {
		c.Path = u.Path
	}
	steps := slices.SortedFunc(slices.Values(r.Steps), func(a, b probe.Step) int { return cmp.Compare(a.Concurrency, b.Concurrency) })
	c.OKStatus = okStatus(r, steps, &c)
	low, ok := lowest(steps)
	if !ok {
		return c, errors.New("the probe measured no success: there is no service time to copy")
	}
	if len(low.Quantiles) < 2 {
		return c, fmt.Errorf("step %d keeps no latency quantiles (a probe by an older loadlab): probe again", low.Concurrency)
	}
	c.Service, c.ServiceConcurrency = low.Quantiles, low.Concurrency
	c.say("service time: the latency distribution at concurrency %d (p50 %s, p99 %s), the round trip included", low.Concurrency, ms(*low.P50Seconds), ms(*low.P99Seconds))
	if r.RejectionsBeginAt != nil {
		c.RejectStatus, c.RetryAfter = refusal(steps, *r.RejectionsBeginAt)
	}
	if c.RejectStatus == 429 && !queued(steps, low, *r.RejectionsBeginAt) {
		c.rateLimited(r, steps, o)
		return c, nil
	}
	return c, c.station(r, steps, low, o)
}

// lowest is the lowest step with a success and a median.
func lowest(steps []probe.Step) (probe.Step, bool) {
	for _, s := range steps {
		if s.OK > 0 && s.P50Seconds != nil && s.P99Seconds != nil {
			return s, true
		}
	}
	return probe.Step{}, false
}

// refusal is the status most of the steps' refusals from concurrency at
// on carried, and the longest Retry-After they asked for.
func refusal(steps []probe.Step, at int) (status int, retryAfter time.Duration) {
	count := map[int]int{}
	for _, s := range steps {
		if s.Concurrency < at {
			continue
		}
		for st, n := range s.RejectedStatuses {
			var code int
			if _, err := fmt.Sscan(st, &code); err == nil {
				count[code] += n
			}
		}
		if s.RetryAfterSeconds != nil {
			retryAfter = max(retryAfter, time.Duration(*s.RetryAfterSeconds*float64(time.Second)))
		}
	}
	status = 503
	best := 0
	for _, code := range slices.Sorted(maps.Keys(count)) {
		if count[code] > best {
			status, best = code, count[code]
		}
	}
	return status, retryAfter
}

// queued says whether a step below concurrency at waited: its median
// latency past NoQueueing times the lowest step's.
func queued(steps []probe.Step, low probe.Step, at int) bool {
	for _, s := range steps {
		if s.Concurrency < at && s.P50Seconds != nil && *s.P50Seconds > NoQueueing**low.P50Seconds {
			return true
		}
	}
	return false
}

func (c *Copy) say(format string, a ...any) { c.Said = append(c.Said, fmt.Sprintf(format, a...)) }

func ms(s float64) string { return fmt.Sprintf("%.3g ms", s*1000) }

// round is x to the nearest whole number, at least 1.
func round(x float64) int { return max(1, int(math.Round(x))) }

// okStatus is the status the copy answers a success with: the one the
// probe's successes got most often, else the first the probe counted as
// success, else 200 (said).
func okStatus(r probe.Result, steps []probe.Step, c *Copy) int {
	seen := map[int]int{}
	for _, st := range steps {
		for text, n := range st.OKStatuses {
			if code, err := strconv.Atoi(text); err == nil {
				seen[code] += n
			}
		}
	}
	if len(seen) > 0 {
		codes := slices.Sorted(maps.Keys(seen))
		best := slices.MaxFunc(codes, func(a, b int) int { return cmp.Or(cmp.Compare(seen[a], seen[b]), cmp.Compare(b, a)) })
		if len(codes) > 1 {
			c.say("success: %d, the status most of the probe's successes got (%s)", best, statusCounts(codes, seen))
		}
		return best
	}
	if len(r.Plan.OKStatuses) > 0 {
		return r.Plan.OKStatuses[0]
	}
	c.say("success: 200; the probe kept no status of its successes (a probe by an older loadlab): give the pipeline's, or probe again")
	return http.StatusOK
}

// statusCounts is "200 ×3, 201 ×40".
func statusCounts(codes []int, seen map[int]int) string {
	var parts []string
	for _, code := range codes {
		parts = append(parts, fmt.Sprintf("%d ×%d", code, seen[code]))
	}
	return strings.Join(parts, ", ")
}
