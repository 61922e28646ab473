package budgets

// Retries under a budget (strategy C6): a retry policy with exponential
// backoff and full jitter, and a per-dependency retry budget that lets
// retries add only a bounded share of load to what first attempts already
// offer.
//
// Sources of the rules:
//   - Backoff: "Exponential Backoff And Jitter", AWS Architecture Blog (Marc
//     Brooker, 2015), "Full Jitter": sleep = random_between(0, min(cap,
//     base * 2 ** attempt)); gRPC's retry design (grpc/proposal
//     A6-client-retries.md, "Exponential Backoff") uses the same form:
//     random(0, min(initialBackoff*backoffMultiplier**(n-1), maxBackoff)).
//   - Budget: Finagle's RetryBudget(ttl, minRetriesPerSec, percentCanRetry)
//     (twitter/finagle, finagle-core/.../service/RetryBudget.scala; "Retry
//     Budgets", Finagle blog, 2016: by default 20% of requests on top of 10
//     retries per second, credits expiring after 10 s), which Linkerd carries
//     as retryRatio, minRetriesPerSecond and ttl (linkerd2-proxy-api
//     RetryBudget). gRPC's retryThrottling(maxTokens, tokenRatio) (A6,
//     "Throttling Retry Attempts and Hedged RPCs") is the other well-known
//     bucket: it is fed by successes and drained by failures, and stops all
//     retries once the count falls to maxTokens/2. It keeps its tokens in
//     thousandths (milli-tokens) so that a ratio adds up exactly; this budget
//     does the same in millionths.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RetryPolicy is how often, and after what wait, a failed call is tried
// again.
type RetryPolicy struct {
	// Attempts counts every try, the first included (gRPC's maxAttempts):
	// 1 means no retry, 3 means the first attempt and up to two retries.
	Attempts int `json:"attempts" yaml:"attempts"`
	// BaseBackoff is the ceiling of the wait before the first retry (> 0);
	// the ceiling doubles with each further retry up to MaxBackoff
	// (≥ BaseBackoff).
	BaseBackoff time.Duration `json:"base_backoff" yaml:"base_backoff"`
	MaxBackoff  time.Duration `json:"max_backoff" yaml:"max_backoff"`
}

// Validate names the first bad field.
func (p RetryPolicy) Validate() error {
	switch {
	case p.Attempts < 1:
		return fmt.Errorf("attempts: %d must be ≥ 1 (1: no retry)", p.Attempts)
	case p.BaseBackoff <= 0:
		return fmt.Errorf("base_backoff: %v must be > 0", p.BaseBackoff)
	case p.MaxBackoff <= 0:
		return fmt.Errorf("max_backoff: %v must be > 0", p.MaxBackoff)
	case p.BaseBackoff > p.MaxBackoff:
		return fmt.Errorf("base_backoff: %v must be ≤ max_backoff (%v)", p.BaseBackoff, p.MaxBackoff)
	}
	return nil
}

// Backoff is the wait before retry number retry (1 for the first retry,
// that is the second attempt), with full jitter:
//
//	rnd() × min(MaxBackoff, BaseBackoff × 2^(retry-1))
//
// rnd must return a number in [0, 1), as rand.Float64 does (nil means
// rand.Float64); the result is a pure function of the policy, retry and what
// rnd returns, so a seeded or scripted rnd makes it deterministic. rnd() ≤ 0
// (or NaN) gives 0, rnd() ≥ 1 gives the ceiling itself; the result is never
// above the ceiling. The ceiling stops doubling once it reaches MaxBackoff,
// so no retry number, however large, overflows. A retry below 1 waits 0.
func (p RetryPolicy) Backoff(retry int, rnd func() float64) time.Duration {
	if retry < 1 || p.BaseBackoff <= 0 || p.MaxBackoff <= 0 {
		return 0
	}
	ceiling := min(p.BaseBackoff, p.MaxBackoff)
	// At most 63 doublings before the ceiling reaches MaxBackoff.
	for i := 1; i < retry && ceiling < p.MaxBackoff; i++ {
		if ceiling > p.MaxBackoff/2 {
			ceiling = p.MaxBackoff
		} else {
			ceiling *= 2
		}
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	r := rnd()
	switch {
	case !(r > 0):
		return 0
	case r >= 1:
		return ceiling
	}
	// r < 1, so the product is below float64(ceiling) ≤ 2^63: it converts.
	return min(time.Duration(r*float64(ceiling)), ceiling)
}

// RetryBudgetConfig is one dependency's retry budget, after Finagle's
// RetryBudget(ttl, minRetriesPerSec, percentCanRetry).
type RetryBudgetConfig struct {
	// Ratio is the share of a token each first attempt deposits, in [0, 1]
	// (Finagle's percentCanRetry, Linkerd's retryRatio): 0.2 lets retries
	// add at most 20% to the first attempts of the last TTL. It is kept in
	// millionths of a token (rounded), so 10 deposits of 0.2 make exactly 2.
	Ratio float64 `json:"ratio" yaml:"ratio"`
	// MinPerSecond is the reserve: retries allowed per second even with no
	// deposits (≥ 0; 0: no reserve), for a client that has just started or
	// sends little (Finagle's minRetriesPerSec).
	MinPerSecond float64 `json:"min_per_second" yaml:"min_per_second"`
	// TTL is how long a deposit counts (> 0); Finagle's ttl (1 s to 60 s
	// there, 10 s by default).
	TTL time.Duration `json:"ttl" yaml:"ttl"`
}

// ParseRetryBudget reads a retry budget written RATIO:MIN_PER_SECOND[:TTL]
// (TTL defaultTTL when left out), or "off": nil, no budget.
func ParseRetryBudget(text string, defaultTTL time.Duration) (*RetryBudgetConfig, error) {
	if text == "off" {
		return nil, nil
	}
	parts := strings.Split(text, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("%q is not RATIO:MIN_PER_SECOND[:TTL] or off", text)
	}
	b := RetryBudgetConfig{TTL: defaultTTL}
	var err error
	if b.Ratio, err = strconv.ParseFloat(parts[0], 64); err != nil {
		return nil, fmt.Errorf("ratio: %q is not a number", parts[0])
	}
	if b.MinPerSecond, err = strconv.ParseFloat(parts[1], 64); err != nil {
		return nil, fmt.Errorf("min_per_second: %q is not a number", parts[1])
	}
	if len(parts) == 3 {
		if b.TTL, err = time.ParseDuration(parts[2]); err != nil {
			return nil, fmt.Errorf("ttl: %q is not a duration", parts[2])
		}
	}
	return &b, nil
}

// Validate names the first bad field.
func (c RetryBudgetConfig) Validate() error {
	switch {
	case !(c.Ratio >= 0 && c.Ratio <= 1): // NaN too
		return fmt.Errorf("ratio: %v must be in [0, 1]", c.Ratio)
	case !(c.MinPerSecond >= 0) || math.IsInf(c.MinPerSecond, 1):
		return fmt.Errorf("min_per_second: %v must be ≥ 0 and finite", c.MinPerSecond)
	case c.TTL <= 0:
		return fmt.Errorf("ttl: %v must be > 0", c.TTL)
	}
	return nil
}

// microsPerToken: the budget counts deposits in millionths of a token, in
// integers, so that deposits of a decimal ratio add up exactly (gRPC keeps
// milli-tokens for the same reason). A retry costs one whole token.
const microsPerToken = 1_000_000

// reserveSlack forgives the rounding of the reserve's float refills: a
// reserve within it of a whole token pays for a retry.
const reserveSlack = 1e-9

// RetryStats counts a budget's traffic: first attempts (deposits), retries
// it let go, and retries it denied.
type RetryStats struct {
	FirstAttempts, Retries, Denied int64
}

// Amplification is the offered load amplification: requests the dependency
// saw per first attempt, (FirstAttempts + Retries) / FirstAttempts. Denied
// retries were never sent and do not count. With no first attempts there is
// nothing to amplify, and it returns 0 (not 1) so an idle budget is told
// apart from one whose calls never needed a retry.
func (s RetryStats) Amplification() float64 {
	if s.FirstAttempts <= 0 {
		return 0
	}
	return float64(s.FirstAttempts+s.Retries) / float64(s.FirstAttempts)
}

// RetryBudget is a per-dependency retry budget: a token bucket that each
// first attempt fills by Ratio of a token and each retry drains by one token,
// plus a reserve of MinPerSecond retries per second that needs no deposits.
// It never blocks: a retry either goes now or is denied (as in gRPC's
// throttling, a denied retry returns the failure to the caller).
//
// The rules, and where they differ from Finagle's:
//   - Deposits expire exactly TTL after they were made (a deposit at t counts
//     during [t, t+TTL)); a withdrawal spends the oldest live deposits first,
//     so only a deposit's unspent rest expires. Finagle approximates this
//     with a counter windowed into ten slices of the TTL (WindowedAdder in
//     TokenBucket.newLeakyBucket), in which withdrawals also roll out of
//     the window; here a spent token is gone for good. Memory is one entry
//     per distinct clock reading of a deposit within the last TTL.
//   - A retry is paid for by the deposits when they hold a whole token, and
//     by the reserve otherwise; neither ever goes below zero.
//   - The reserve is a bucket of its own: it starts full, holds at most
//     max(MinPerSecond, 1) tokens (one second's worth; at least one, so that
//     a reserve below one retry per second still lets one through) and
//     refills continuously at MinPerSecond tokens per second. Finagle adds
//     minRetriesPerSec × ttl to its windowed balance instead, which allows a
//     burst of a whole TTL's reserve at once; this reserve bursts by at most
//     one second's worth.
//
// So the retries let go during any interval are at most Ratio × the first
// attempts made in it and in the TTL before it, plus MinPerSecond per second
// of it, plus the reserve's capacity. It is safe for concurrent use.
type RetryBudget struct {
	cfg          RetryBudgetConfig
	now          func() time.Time
	deposit      int64   // micro-tokens per first attempt
	reserveLimit float64 // tokens; 0 when there is no reserve

	mu       sync.Mutex
	deposits []retryDeposit // oldest first
	balance  int64          // micro-tokens: the sum of deposits' left
	reserve  float64        // tokens
	refilled time.Time      // when reserve was last refilled

	first, retries, denied atomic.Int64
}

// retryDeposit is what is left of the deposits made at one clock reading.
type retryDeposit struct {
	at   time.Time
	left int64 // micro-tokens
}

// NewRetryBudget returns a budget with cfg, reading the time from now (nil
// means time.Now; tests pass a fake clock). It returns an error naming the
// bad field of an invalid cfg.
func NewRetryBudget(cfg RetryBudgetConfig, now func() time.Time) (*RetryBudget, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("budgets: retry budget: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	b := &RetryBudget{
		cfg:     cfg,
		now:     now,
		deposit: int64(math.Round(cfg.Ratio * microsPerToken)),
	}
	if cfg.MinPerSecond > 0 {
		b.reserveLimit = max(cfg.MinPerSecond, 1)
		b.reserve = b.reserveLimit
		b.refilled = now()
	}
	return b, nil
}

// Config returns the budget's configuration.
func (b *RetryBudget) Config() RetryBudgetConfig { return b.cfg }

// Deposit records a first attempt: it counts it and deposits Ratio of a
// token, which counts for TTL.
func (b *RetryBudget) Deposit() {
	b.first.Add(1)
	if b.deposit == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.expire(now)
	// Deposits stay in clock order: one at (or, should the clock step back,
	// before) the newest reading joins it.
	if n := len(b.deposits); n > 0 && !now.After(b.deposits[n-1].at) {
		b.deposits[n-1].left += b.deposit
	} else {
		b.deposits = append(b.deposits, retryDeposit{at: now, left: b.deposit})
	}
	b.balance += b.deposit
}

// TryWithdraw asks whether a retry may go now. If the live deposits hold a
// whole token, it spends one of them (oldest first) and returns true; else,
// if the reserve holds one, it spends that and returns true; else it returns
// false and changes no balance. Each answer is counted in Stats.
func (b *RetryBudget) TryWithdraw() bool {
	b.mu.Lock()
	ok := b.withdraw(b.now())
	b.mu.Unlock()
	if ok {
		b.retries.Add(1)
	} else {
		b.denied.Add(1)
	}
	return ok
}

// withdraw is TryWithdraw's decision; b.mu is held.
func (b *RetryBudget) withdraw(now time.Time) bool {
	b.expire(now)
	if b.balance >= microsPerToken {
		need := int64(microsPerToken)
		for need > 0 {
			take := min(need, b.deposits[0].left)
			b.deposits[0].left -= take
			need -= take
			if b.deposits[0].left == 0 {
				b.deposits = b.deposits[1:]
			}
		}
		b.balance -= microsPerToken
		return true
	}
	b.refill(now)
	if b.reserve >= 1-reserveSlack {
		b.reserve = max(b.reserve-1, 0)
		return true
	}
	return false
}

// Balance is how many retries could go now: the live deposits' tokens plus
// the reserve's (fractions included; a retry needs a whole token from one of
// the two).
func (b *RetryBudget) Balance() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.expire(now)
	b.refill(now)
	return float64(b.balance)/microsPerToken + b.reserve
}

// Stats returns the budget's counters. Each is read atomically, the three
// not together: while calls go on, they may be from slightly different
// instants.
func (b *RetryBudget) Stats() RetryStats {
	return RetryStats{
		FirstAttempts: b.first.Load(),
		Retries:       b.retries.Load(),
		Denied:        b.denied.Load(),
	}
}

// expire drops the deposits made TTL or longer before now; b.mu is held.
func (b *RetryBudget) expire(now time.Time) {
	i := 0
	for i < len(b.deposits) && !now.Before(b.deposits[i].at.Add(b.cfg.TTL)) {
		b.balance -= b.deposits[i].left
		i++
	}
	b.deposits = b.deposits[i:]
}

// refill adds to the reserve what it earned since the last refill; b.mu is
// held. A clock that steps back earns nothing.
func (b *RetryBudget) refill(now time.Time) {
	if b.reserveLimit == 0 {
		return
	}
	elapsed := now.Sub(b.refilled)
	if elapsed <= 0 {
		return
	}
	b.reserve = min(b.reserve+elapsed.Seconds()*b.cfg.MinPerSecond, b.reserveLimit)
	b.refilled = now
}
