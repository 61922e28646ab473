package records

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/strategy"
)

// retrier tries calls again under a strategy's Retries, and counts per
// dependency.
type retrier struct {
	policy  budgets.RetryPolicy // backoffs scaled to real time
	budgets map[string]*budgets.RetryBudget
	counts  map[string]*retryCounts
	// unansweredRetries counts the write attempts, of writes attempted
	// more than once, that were sent and got no answer: each may have been
	// stored as a duplicate whose 200 the client never saw.
	unansweredRetries atomic.Int64
}

type retryCounts struct{ first, retries, denied atomic.Int64 }

// newRetrier returns the retrier of r (nil: first attempts counted, no
// retry) for the pipeline's dependencies, with lab durations scaled.
func newRetrier(r *strategy.Retries, p *pipeline.Pipeline, scale float64) (*retrier, error) {
	out := &retrier{counts: map[string]*retryCounts{}, budgets: map[string]*budgets.RetryBudget{}}
	for _, d := range p.Dependencies {
		out.counts[d.Name] = &retryCounts{}
	}
	if r == nil {
		out.policy.Attempts = 1
		return out, nil
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	real := func(d time.Duration) time.Duration { return max(time.Duration(float64(d)*scale), 1) }
	out.policy = budgets.RetryPolicy{Attempts: r.Attempts, BaseBackoff: real(r.BaseBackoff), MaxBackoff: real(r.MaxBackoff)}
	if r.Budget != nil {
		// The budget keeps lab time: its TTL, its reserve's rate and its
		// one second's worth of burst are all the lab's.
		start := time.Now()
		labNow := func() time.Time { return start.Add(time.Duration(float64(time.Since(start)) / scale)) }
		for _, d := range p.Dependencies {
			b, err := budgets.NewRetryBudget(*r.Budget, labNow)
			if err != nil {
				return nil, fmt.Errorf("retries.budget: %w", err)
			}
			out.budgets[d.Name] = b
		}
	}
	return out, nil
}

// retryable: a failure the dependency answered with a refusal, or no
// answer in time, or a transport error; not a wait the client gave up on
// (permit or rate timeout) and not an interrupted run.
func retryable(ctx context.Context, res budgets.Result) bool {
	if ctx.Err() != nil {
		return false
	}
	switch res.Class {
	case budgets.Rejected, budgets.CallTimeout, budgets.Error:
		return true
	}
	return false
}

// unanswered: the call was written and no answer came.
func unanswered(res budgets.Result) bool {
	return res.Status == 0 && res.Latency > 0 && !errors.Is(res.Err, errNotSent)
}

// do makes dep's call through its budget, again after a backoff while it
// fails retryably, the attempts allow and the retry budget has a token.
// each is told every attempt's result. It returns the last result, and
// whether an attempt before the last was written without an answer. For
// a write (isWrite) attempted more than once, every attempt written
// without an answer is counted: each may have been stored as a duplicate
// whose 200 the client never saw.
func (rt *retrier) do(ctx context.Context, b *budgets.Budget, dep string, isWrite bool, call budgets.Call, each func(budgets.Result)) (res budgets.Result, earlierUnanswered bool) {
	c := rt.counts[dep]
	c.first.Add(1)
	rb := rt.budgets[dep]
	if rb != nil {
		rb.Deposit()
	}
	lost := 0 // attempts written without an answer
	attempt := 1
	defer func() {
		if isWrite && attempt > 1 {
			rt.unansweredRetries.Add(int64(lost))
		}
	}()
	for ; ; attempt++ {
		res = b.Do(ctx, dep, call)
		each(res)
		if unanswered(res) {
			lost++
		}
		if res.Class == budgets.OK || attempt >= rt.policy.Attempts || !retryable(ctx, res) {
			return res, earlierUnanswered
		}
		if rb != nil && !rb.TryWithdraw() {
			c.denied.Add(1)
			return res, earlierUnanswered
		}
		earlierUnanswered = earlierUnanswered || unanswered(res)
		t := time.NewTimer(rt.policy.Backoff(attempt, nil))
		select {
		case <-ctx.Done():
			t.Stop()
			return res, earlierUnanswered
		case <-t.C:
		}
		c.retries.Add(1)
	}
}

// RetryCounts is one dependency's attempts in a run.
type RetryCounts struct {
	// FirstAttempts are the calls the records' steps made; Retries the
	// further attempts made; Denied the retries the retry budget refused.
	FirstAttempts int `json:"first_attempts"`
	Retries       int `json:"retries"`
	Denied        int `json:"retries_denied"`
	// Amplification is the requests written to the wire ÷ first attempts
	// (0: no first attempt): the offered load amplification as the client
	// sees it (the experiments divide the server's count instead).
	Amplification float64 `json:"amplification"`
}

// result is each dependency's counts, given its calls written.
func (rt *retrier) result(sent map[string]int) map[string]RetryCounts {
	out := map[string]RetryCounts{}
	for dep, c := range rt.counts {
		rc := RetryCounts{FirstAttempts: int(c.first.Load()), Retries: int(c.retries.Load()), Denied: int(c.denied.Load())}
		if rc.FirstAttempts > 0 {
			rc.Amplification = float64(sent[dep]) / float64(rc.FirstAttempts)
		}
		out[dep] = rc
	}
	return out
}

// describeRetries is the report's line on attempts (empty: no retry made
// or allowed).
func describeRetries(counts map[string]RetryCounts) string {
	var each []string
	for _, dep := range slices.Sorted(maps.Keys(counts)) {
		c := counts[dep]
		if c.Retries == 0 && c.Denied == 0 {
			continue
		}
		each = append(each, fmt.Sprintf("%s %d retries after %d first attempts (%d denied by the budget), %.2f× requests per first attempt",
			dep, c.Retries, c.FirstAttempts, c.Denied, c.Amplification))
	}
	return strings.Join(each, "; ")
}
