package budgets

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// retryClock is a fake clock for retry budgets: it moves only when told, and
// may be read from many goroutines.
type retryClock struct{ ns atomic.Int64 }

func (c *retryClock) now() time.Time          { return time.Unix(1_700_000_000, c.ns.Load()) }
func (c *retryClock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func retryConst(r float64) func() float64     { return func() float64 { return r } }
func newRetryBudgetT(t *testing.T, cfg RetryBudgetConfig, c *retryClock) *RetryBudget {
	t.Helper()
	b, err := NewRetryBudget(cfg, c.now)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withdrawN asks for n retries and returns how many were let go.
func withdrawN(b *RetryBudget, n int) int {
	ok := 0
	for range n {
		if b.TryWithdraw() {
			ok++
		}
	}
	return ok
}

// wantRetries asks for ask retries and fails unless want go.
func wantRetries(t *testing.T, b *RetryBudget, ask, want int, when string) {
	t.Helper()
	if got := withdrawN(b, ask); got != want {
		t.Fatalf("%s: %d of %d retries went, want %d", when, got, ask, want)
	}
}

// wantBalance fails unless the balance is exactly want.
func wantBalance(t *testing.T, b *RetryBudget, want float64, when string) {
	t.Helper()
	if got := b.Balance(); got != want {
		t.Fatalf("%s: balance %v, want %v", when, got, want)
	}
}

// deposit makes n first attempts.
func deposit(b *RetryBudget, n int) {
	for range n {
		b.Deposit()
	}
}

func TestRetryPolicyValidate(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		p    RetryPolicy
		want string
	}{
		{RetryPolicy{Attempts: 1, BaseBackoff: ms, MaxBackoff: ms}, ""},
		{RetryPolicy{Attempts: 3, BaseBackoff: 100 * ms, MaxBackoff: time.Second}, ""},
		{RetryPolicy{Attempts: 0, BaseBackoff: ms, MaxBackoff: ms}, "attempts: 0 must be ≥ 1 (1: no retry)"},
		{RetryPolicy{Attempts: -2, BaseBackoff: ms, MaxBackoff: ms}, "attempts: -2 must be ≥ 1 (1: no retry)"},
		{RetryPolicy{Attempts: 3, BaseBackoff: 0, MaxBackoff: ms}, "base_backoff: 0s must be > 0"},
		{RetryPolicy{Attempts: 3, BaseBackoff: ms, MaxBackoff: -ms}, "max_backoff: -1ms must be > 0"},
		{RetryPolicy{Attempts: 3, BaseBackoff: 2 * ms, MaxBackoff: ms}, "base_backoff: 2ms must be ≤ max_backoff (1ms)"},
	} {
		err := tc.p.Validate()
		if got := errText(err); got != tc.want {
			t.Errorf("%+v: Validate() = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRetryBackoffFullJitter(t *testing.T) {
	p := RetryPolicy{Attempts: 8, BaseBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}
	ms := time.Millisecond
	// The ceiling doubles from BaseBackoff until MaxBackoff; the wait is
	// rnd() × the ceiling.
	for i, ceiling := range []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second, time.Second} {
		retry := i + 1
		for _, r := range []float64{0, 0.25, 0.5, 1} {
			if got, want := p.Backoff(retry, retryConst(r)), time.Duration(r*float64(ceiling)); got != want {
				t.Errorf("retry %d, rnd %v: %v, want %v", retry, r, got, want)
			}
		}
		almost := p.Backoff(retry, retryConst(math.Nextafter(1, 0)))
		if almost > ceiling || ceiling-almost > time.Nanosecond {
			t.Errorf("retry %d, rnd just below 1: %v, want within 1ns below %v", retry, almost, ceiling)
		}
	}
	// Out-of-range rnd values are clamped; no retry means no wait.
	for _, tc := range []struct {
		retry int
		r     float64
		want  time.Duration
	}{{2, -0.5, 0}, {2, math.NaN(), 0}, {2, math.Inf(-1), 0}, {2, 7, 200 * ms}, {0, 1, 0}, {-1, 1, 0}} {
		if got := p.Backoff(tc.retry, retryConst(tc.r)); got != tc.want {
			t.Errorf("retry %d, rnd %v: %v, want %v", tc.retry, tc.r, got, tc.want)
		}
	}
	// Deterministic given rnd; a nil rnd stays within the ceiling.
	seq := func() func() float64 {
		vals, i := []float64{0.9, 0.1, 0.7}, 0
		return func() float64 { v := vals[i%len(vals)]; i++; return v }
	}
	a, b := seq(), seq()
	for retry := 1; retry <= 6; retry++ {
		if x, y := p.Backoff(retry, a), p.Backoff(retry, b); x != y {
			t.Errorf("retry %d: %v and %v from the same rnd sequence", retry, x, y)
		}
		if d := p.Backoff(retry, nil); d < 0 || d > time.Second {
			t.Errorf("retry %d, nil rnd: %v outside [0, 1s]", retry, d)
		}
	}
}

func TestRetryBackoffDoesNotOverflow(t *testing.T) {
	huge := RetryPolicy{Attempts: 3, BaseBackoff: time.Nanosecond, MaxBackoff: math.MaxInt64}
	if got := huge.Backoff(11, retryConst(1)); got != 1024*time.Nanosecond {
		t.Errorf("huge max, retry 11: %v, want 1.024µs", got)
	}
	if got := huge.Backoff(100, retryConst(1)); got != math.MaxInt64 {
		t.Fatalf("huge max, retry 100: %v, want MaxInt64", got)
	}
	small := RetryPolicy{Attempts: 3, BaseBackoff: 100 * time.Millisecond, MaxBackoff: 30 * time.Second}
	for _, retry := range []int{62, 63, 64, 65, 100, 1 << 20, math.MaxInt} {
		if got := huge.Backoff(retry, retryConst(math.Nextafter(1, 0))); got <= 0 {
			t.Errorf("huge max, retry %d, rnd just below 1: %v overflowed", retry, got)
		}
		if got := small.Backoff(retry, retryConst(1)); got != 30*time.Second {
			t.Errorf("retry %d: %v, want the cap 30s", retry, got)
		}
	}
}

func TestRetryBudgetConfigValidate(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		c    RetryBudgetConfig
		want string
	}{
		{RetryBudgetConfig{Ratio: 0.2, MinPerSecond: 10, TTL: 10 * s}, ""},
		{RetryBudgetConfig{Ratio: 0, MinPerSecond: 0, TTL: s}, ""},
		{RetryBudgetConfig{Ratio: 1, MinPerSecond: 0.5, TTL: s}, ""},
		{RetryBudgetConfig{Ratio: 1.5, TTL: s}, "ratio: 1.5 must be in [0, 1]"},
		{RetryBudgetConfig{Ratio: -0.1, TTL: s}, "ratio: -0.1 must be in [0, 1]"},
		{RetryBudgetConfig{Ratio: math.NaN(), TTL: s}, "ratio: NaN must be in [0, 1]"},
		{RetryBudgetConfig{Ratio: 0.2, MinPerSecond: -1, TTL: s}, "min_per_second: -1 must be ≥ 0 and finite"},
		{RetryBudgetConfig{Ratio: 0.2, MinPerSecond: math.Inf(1), TTL: s}, "min_per_second: +Inf must be ≥ 0 and finite"},
		{RetryBudgetConfig{Ratio: 0.2, MinPerSecond: math.NaN(), TTL: s}, "min_per_second: NaN must be ≥ 0 and finite"},
		{RetryBudgetConfig{Ratio: 0.2, TTL: 0}, "ttl: 0s must be > 0"},
		{RetryBudgetConfig{Ratio: 0.2, TTL: -s}, "ttl: -1s must be > 0"},
	} {
		if got := errText(tc.c.Validate()); got != tc.want {
			t.Errorf("%+v: Validate() = %q, want %q", tc.c, got, tc.want)
		}
		_, err := NewRetryBudget(tc.c, nil)
		if want := "budgets: retry budget: " + tc.want; tc.want != "" && errText(err) != want {
			t.Errorf("%+v: NewRetryBudget: %q, want %q", tc.c, errText(err), want)
		} else if tc.want == "" && err != nil {
			t.Errorf("%+v: NewRetryBudget: %v", tc.c, err)
		}
	}
}

func TestRetryBudgetRatio(t *testing.T) {
	var c retryClock
	b := newRetryBudgetT(t, RetryBudgetConfig{Ratio: 0.2, TTL: 10 * time.Second}, &c)
	if b.TryWithdraw() {
		t.Fatal("a retry went with no deposits and no reserve")
	}
	deposit(b, 10)
	wantBalance(t, b, 2, "after 10 deposits of 0.2")
	wantRetries(t, b, 3, 2, "ratio 0.2, 10 first attempts") // the 3rd is denied
	wantBalance(t, b, 0, "after 2 retries")
	deposit(b, 4) // 0.8 of a token: not a whole retry
	wantRetries(t, b, 1, 0, "on 0.8 of a token")
	b.Deposit() // a whole token
	wantRetries(t, b, 1, 1, "on a whole token")
	want := RetryStats{FirstAttempts: 15, Retries: 3, Denied: 3}
	if got := b.Stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
	if got := b.Stats().Amplification(); got != 18.0/15 {
		t.Errorf("amplification %v, want %v", got, 18.0/15)
	}
}

func TestRetryBudgetReserve(t *testing.T) {
	var c retryClock
	b := newRetryBudgetT(t, RetryBudgetConfig{Ratio: 0, MinPerSecond: 3, TTL: 10 * time.Second}, &c)
	b.Deposit() // ratio 0: counted, no tokens
	wantBalance(t, b, 3, "starting")
	wantRetries(t, b, 5, 3, "no deposits: MinPerSecond")
	c.advance(500 * time.Millisecond) // half a second: 1.5 tokens
	wantRetries(t, b, 5, 1, "after half a second")
	c.advance(time.Second) // refilled, and capped at one second's worth
	wantBalance(t, b, 3, "a second later")
	wantRetries(t, b, 5, 3, "after a second")
	c.advance(time.Hour) // the reserve never holds more than a second's worth
	wantRetries(t, b, 10, 3, "after an hour")
	// Over 10 s in 1 ms steps: 3 per second, give or take the starting
	// reserve, despite float steps.
	got := 0
	for range 10_000 {
		c.advance(time.Millisecond)
		got += withdrawN(b, 1)
	}
	if got != 30 {
		t.Errorf("%d retries over 10 s of 1 ms steps, want 30", got)
	}
	if s := b.Stats(); s.FirstAttempts != 1 || s.Retries != 40 {
		t.Errorf("stats %+v, want 1 first attempt and 40 retries", s)
	}
}

func TestRetryBudgetReserveBelowOnePerSecond(t *testing.T) {
	var c retryClock
	b := newRetryBudgetT(t, RetryBudgetConfig{MinPerSecond: 0.5, TTL: time.Second}, &c)
	wantRetries(t, b, 3, 1, "at the start")
	c.advance(time.Second)
	wantRetries(t, b, 3, 0, "after 1 s at 0.5/s")
	c.advance(time.Second)
	wantRetries(t, b, 3, 1, "after 2 s at 0.5/s")

	// Ten refills of 0.1 add up to 0.9999999999999999 in floats: still a
	// whole retry.
	b = newRetryBudgetT(t, RetryBudgetConfig{MinPerSecond: 0.1, TTL: time.Second}, &c)
	wantRetries(t, b, 2, 1, "at the start")
	for range 10 {
		c.advance(time.Second)
		b.Balance() // refills by 0.1
	}
	wantRetries(t, b, 2, 1, "after 10 s at 0.1/s")
}

func TestRetryBudgetDepositsFirstThenReserve(t *testing.T) {
	var c retryClock
	b := newRetryBudgetT(t, RetryBudgetConfig{Ratio: 0.2, MinPerSecond: 1, TTL: 10 * time.Second}, &c)
	deposit(b, 10)
	wantBalance(t, b, 3, "2 from deposits, 1 in reserve")
	wantRetries(t, b, 5, 3, "2 from deposits, 1 from the reserve")
	// Ratio 0 and no reserve: nothing, ever.
	b = newRetryBudgetT(t, RetryBudgetConfig{TTL: time.Second}, &c)
	deposit(b, 100)
	if got := withdrawN(b, 10); got != 0 || b.Stats().Amplification() != 1 {
		t.Fatalf("%d retries with ratio 0 and no reserve; stats %+v", got, b.Stats())
	}
}

func TestRetryBudgetDepositsExpire(t *testing.T) {
	var c retryClock
	ttl := 10 * time.Second
	b := newRetryBudgetT(t, RetryBudgetConfig{Ratio: 0.5, TTL: ttl}, &c)
	for range 4 {
		b.Deposit() // 2 tokens at t0
	}
	c.advance(ttl - time.Nanosecond)
	wantBalance(t, b, 2, "just before TTL")
	c.advance(time.Nanosecond)
	wantBalance(t, b, 0, "at TTL")
	if b.TryWithdraw() {
		t.Fatal("a retry went on expired deposits")
	}

	// A withdrawal spends the oldest deposits first: the newer ones outlive
	// the older ones' TTL.
	b.Deposit() // t1: 0.5
	b.Deposit() // t1: 0.5
	c.advance(4 * time.Second)
	b.Deposit() // t1+4s: 0.5
	b.Deposit() // t1+4s: 0.5
	c.advance(time.Second)
	b.Deposit() // t1+5s: 0.5
	if !b.TryWithdraw() {
		t.Fatal("a retry denied on 2.5 tokens")
	}
	c.advance(5 * time.Second) // t1+10s: t1's deposits would expire, but were spent
	wantBalance(t, b, 1.5, "at t1+TTL")
	c.advance(4 * time.Second) // t1+14s: t1+4s's deposits expire
	wantBalance(t, b, 0.5, "at t1+4s+TTL")
	c.advance(time.Second)
	wantBalance(t, b, 0, "after every TTL")
}

func TestRetryBudgetPartialSpendAcrossDeposits(t *testing.T) {
	var c retryClock
	ttl := time.Second
	b := newRetryBudgetT(t, RetryBudgetConfig{Ratio: 0.3, TTL: ttl}, &c)
	for range 4 { // 0.3 at each of t, t+1ms, t+2ms, t+3ms
		b.Deposit()
		c.advance(time.Millisecond)
	}
	if !b.TryWithdraw() {
		t.Fatal("a retry denied on 1.2 tokens")
	}
	// The retry took 0.3+0.3+0.3 and 0.1 of the 4th; 0.2 of it is left.
	c.advance(ttl - 4*time.Millisecond + 2*time.Millisecond) // the first three expire
	if got := b.Balance(); math.Abs(got-0.2) > 1e-12 {
		t.Fatalf("balance %v, want 0.2", got)
	}
	c.advance(time.Millisecond)
	wantBalance(t, b, 0, "when the 4th expires")
}

func TestRetryBudgetClockStepsBack(t *testing.T) {
	var c retryClock
	c.advance(time.Hour)
	b := newRetryBudgetT(t, RetryBudgetConfig{Ratio: 1, MinPerSecond: 1, TTL: time.Second}, &c)
	b.Deposit()
	c.advance(-time.Minute)
	b.Deposit() // joins the newest deposit, keeping the queue in order
	wantRetries(t, b, 5, 3, "2 deposits, 1 from the reserve")
	c.advance(30 * time.Second) // still before the reserve's last refill
	wantBalance(t, b, 0, "a clock that steps back earns nothing")
}

func TestRetryStatsAmplification(t *testing.T) {
	for _, tc := range []struct {
		s    RetryStats
		want float64
	}{
		{RetryStats{}, 0},
		{RetryStats{Retries: 5, Denied: 2}, 0},
		{RetryStats{FirstAttempts: 10}, 1},
		{RetryStats{FirstAttempts: 100, Retries: 25, Denied: 40}, 1.25},
		{RetryStats{FirstAttempts: 4, Retries: 8}, 3},
	} {
		if got := tc.s.Amplification(); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestRetryBudgetConcurrent(t *testing.T) {
	var c retryClock
	b := newRetryBudgetT(t, RetryBudgetConfig{Ratio: 0.2, MinPerSecond: 5, TTL: time.Second}, &c)
	const workers, perWorker = 8, 500
	var wg sync.WaitGroup
	var negative atomic.Int64
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				switch {
				case i%2 == 0:
					b.Deposit()
				default:
					b.TryWithdraw()
				}
				if b.Balance() < 0 {
					negative.Add(1)
				}
				if w == 0 && i%100 == 0 {
					c.advance(100 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	if n := negative.Load(); n > 0 {
		t.Fatalf("balance seen below zero %d times", n)
	}
	if got := b.Balance(); got < 0 {
		t.Fatalf("final balance %v", got)
	}
	s := b.Stats()
	if s.FirstAttempts != workers*perWorker/2 || s.Retries+s.Denied != workers*perWorker/2 {
		t.Fatalf("stats %+v, want %d first attempts and %d retry decisions", s, workers*perWorker/2, workers*perWorker/2)
	}
	// The clock moved 0.5 s in all: retries ≤ 0.2 × deposits + the reserve's
	// capacity (5) + 0.5 s × 5/s.
	if limit := int64(0.2*float64(s.FirstAttempts)) + 5 + 3; s.Retries > limit {
		t.Errorf("%d retries let go, more than the budget's %d", s.Retries, limit)
	}
	if s.Retries == 0 || s.Denied == 0 {
		t.Errorf("stats %+v: want some retries let go and some denied", s)
	}
}
