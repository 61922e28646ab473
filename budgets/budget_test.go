package budgets

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func newMetrics(t *testing.T) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	return NewMetrics(reg), reg
}

func status(code int) Call {
	return func(context.Context) (int, error) { return code, nil }
}

// block waits until release is closed or the call's context ends.
func block(release <-chan struct{}) Call {
	return func(ctx context.Context) (int, error) {
		select {
		case <-release:
			return http.StatusOK, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// Timing here is the subject, so it runs in a synctest bubble: fake time,
// exact durations, no margins.

func TestClassOfEveryCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := newMetrics(t)
		b, err := New("b", Config{Limiter: Fixed(1), PermitTimeout: 50 * time.Millisecond, CallTimeout: 50 * time.Millisecond}, m)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		tests := []struct {
			name string
			call Call
			want Class
		}{
			{"200", status(200), OK},
			{"201", status(201), OK},
			{"503", status(503), Rejected},
			{"429", status(429), Rejected},
			{"500", status(500), Error},
			{"404", status(404), Error},
			{"transport error", func(context.Context) (int, error) { return 0, errors.New("connection refused") }, Error},
			{"slower than the call timeout", block(nil), CallTimeout},
		}
		for _, tt := range tests {
			if got := b.Do(ctx, "dep", tt.call); got.Class != tt.want {
				t.Errorf("%s: class %s (%v), want %s", tt.name, got.Class, got.Err, tt.want)
			}
		}
		got := m.Snapshot()["dep"].Calls
		want := map[Class]int{OK: 2, Rejected: 2, Error: 3, CallTimeout: 1, PermitTimeout: 0}
		for c, n := range want {
			if got[c] != n {
				t.Errorf("%s counted %d, want %d", c, got[c], n)
			}
		}
		if v := testutil.ToFloat64(m.calls.WithLabelValues("dep", "error")); v != 3 {
			t.Errorf("calls_total{class=error} %v, want 3", v)
		}
	})
}

// A held permit makes the next caller time out waiting for one after
// exactly the permit timeout, and that call is never made.
func TestPermitTimeoutIsNotACallTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := newMetrics(t)
		b, err := New("b", Config{Limiter: Fixed(1), PermitTimeout: 30 * time.Millisecond, CallTimeout: time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		held := make(chan Result)
		go func() { held <- b.Do(context.Background(), "dep", block(release)) }()
		synctest.Wait()
		if m.InFlight("dep") != 1 {
			t.Fatal("the first call does not hold the permit")
		}
		called := false
		res := b.Do(context.Background(), "dep", func(context.Context) (int, error) { called = true; return 200, nil })
		if res.Class != PermitTimeout || called || res.PermitWait != 30*time.Millisecond || res.Latency != 0 {
			t.Errorf("second call: class %s, called %v, waited %v, latency %v; want permit_timeout after exactly 30ms, never called",
				res.Class, called, res.PermitWait, res.Latency)
		}
		close(release)
		if r := <-held; r.Class != OK {
			t.Errorf("first call: %s, want ok", r.Class)
		}
	})
}

// The call timeout starts when the permit is held: waiting 80 ms for a
// permit does not eat into a 150 ms call timeout for a 100 ms call.
func TestCallTimeoutStartsAfterThePermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := newMetrics(t)
		b, err := New("b", Config{Limiter: Fixed(1), PermitTimeout: time.Second, CallTimeout: 150 * time.Millisecond}, m)
		if err != nil {
			t.Fatal(err)
		}
		sleep := func(d time.Duration) Call {
			return func(ctx context.Context) (int, error) {
				select {
				case <-time.After(d):
					return 200, nil
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}
		}
		var wg sync.WaitGroup
		wg.Go(func() { b.Do(context.Background(), "dep", sleep(80*time.Millisecond)) })
		synctest.Wait()
		res := b.Do(context.Background(), "dep", sleep(100*time.Millisecond))
		wg.Wait()
		if res.Class != OK || res.PermitWait != 80*time.Millisecond || res.Latency != 100*time.Millisecond {
			t.Errorf("class %s after waiting %v for the permit, call %v; want ok after 80 ms, a 100 ms call",
				res.Class, res.PermitWait, res.Latency)
		}
	})
}

func TestLimitCapsCallsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, reg := newMetrics(t)
		b, err := New("b", Config{Limiter: Fixed(3), PermitTimeout: 5 * time.Second, CallTimeout: 5 * time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(func() {
				b.Do(context.Background(), "dep", func(context.Context) (int, error) {
					time.Sleep(10 * time.Millisecond)
					return 200, nil
				})
			})
		}
		wg.Wait()
		if got := m.Snapshot()["dep"].PeakInFlight; got != 3 {
			t.Errorf("peak in flight %d, want 3", got)
		}
		// 12 calls of 10 ms, three at a time: four rounds.
		if el := time.Since(start); el != 40*time.Millisecond {
			t.Errorf("12 calls of 10 ms through 3 permits took %v, want 40 ms", el)
		}
		want := `
# HELP loadlab_client_calls_in_flight_high_water Most calls in flight at once, per dependency, since the metrics were created.
# TYPE loadlab_client_calls_in_flight_high_water gauge
loadlab_client_calls_in_flight_high_water{dependency="dep"} 3
# HELP loadlab_client_calls_in_flight Calls holding a permit and in progress, per dependency.
# TYPE loadlab_client_calls_in_flight gauge
loadlab_client_calls_in_flight{dependency="dep"} 0
`
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
			"loadlab_client_calls_in_flight_high_water", "loadlab_client_calls_in_flight"); err != nil {
			t.Error(err)
		}
	})
}

// The budgets' metrics pass the metrics linter.
func TestMetricsAreLintClean(t *testing.T) {
	m, reg := newMetrics(t)
	b, err := New("b", Config{Limiter: Fixed(1), Rate: 100, PermitTimeout: time.Second, CallTimeout: time.Second}, m)
	if err != nil {
		t.Fatal(err)
	}
	b.Do(context.Background(), "dep", status(200))
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// A shared budget caps the sum over dependencies, not each one.
func TestSharedBudgetCountsPerDependency(t *testing.T) {
	m, _ := newMetrics(t)
	b, err := New("shared", Config{Limiter: Fixed(2), PermitTimeout: time.Second, CallTimeout: time.Second}, m)
	if err != nil {
		t.Fatal(err)
	}
	b.Do(context.Background(), "enrichment", status(200))
	b.Do(context.Background(), "records", status(503))
	snap := m.Snapshot()
	if snap["enrichment"].Calls[OK] != 1 || snap["records"].Calls[Rejected] != 1 {
		t.Errorf("snapshot %+v", snap)
	}
}

// A caller that can have no rate token before the permit timeout runs out
// waits the whole permit timeout, is classed rate_timeout (not
// permit_timeout), and takes no token: the next token is still there for
// the next caller.
func TestRateTimeoutWaitsOutThePermitTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := newMetrics(t)
		// Plenty of permits, but 5 calls/s with a burst of 1: after the first
		// call the next token is 200 ms away, beyond the 60 ms permit timeout.
		b, err := New("b", Config{Limiter: Fixed(100), Rate: 5, Burst: 1, PermitTimeout: 60 * time.Millisecond, CallTimeout: time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		first := b.Do(context.Background(), "dep", status(200))
		called := false
		second := b.Do(context.Background(), "dep", func(context.Context) (int, error) { called = true; return 200, nil })
		if first.Class != OK || first.RateWait != 0 || first.PermitWait != 0 {
			t.Errorf("first: %s after %v for the token, %v for the permit; want ok at once", first.Class, first.RateWait, first.PermitWait)
		}
		if second.Class != RateTimeout || called || second.RateWait != 60*time.Millisecond || second.PermitWait != 0 ||
			time.Since(start) != 60*time.Millisecond {
			t.Errorf("second: %s (called %v) after %v for the token, %v for the permit, at %v; want rate_timeout after exactly 60 ms, never called",
				second.Class, called, second.RateWait, second.PermitWait, time.Since(start))
		}
		// The token at 200 ms was not taken by the caller who gave up.
		time.Sleep(200*time.Millisecond - time.Since(start))
		if third := b.Do(context.Background(), "dep", status(200)); third.Class != OK || third.RateWait != 0 {
			t.Errorf("third, at 200 ms: %s after %v for the token; want ok at once", third.Class, third.RateWait)
		}
		got := m.Snapshot()["dep"].Calls
		if got[RateTimeout] != 1 || got[PermitTimeout] != 0 || got[OK] != 2 {
			t.Errorf("counted %v; want 2 ok, 1 rate_timeout, 0 permit_timeout", got)
		}
		// With a token in reach, the caller waits for it: 20/s is a token
		// every 50 ms.
		b2, err := New("b2", Config{Limiter: Fixed(100), Rate: 20, Burst: 1, PermitTimeout: time.Second, CallTimeout: time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		for i := range 3 {
			if r := b2.Do(context.Background(), "dep2", status(200)); r.Class != OK || r.RateWait != time.Duration(min(i, 1))*50*time.Millisecond {
				t.Errorf("call %d: %s after %v for the token, want ok after %v", i, r.Class, r.RateWait, time.Duration(min(i, 1))*50*time.Millisecond)
			}
		}
		if el := time.Since(start); el != 100*time.Millisecond {
			t.Errorf("3 calls at 20/s took %v, want 100 ms", el)
		}
	})
}

// A caller whose context ends while it waits for a token ends as an error
// after the real time waited, and gives the token back.
func TestCancelledWhileWaitingForAToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := newMetrics(t)
		b, err := New("b", Config{Limiter: Fixed(1), Rate: 1, Burst: 1, PermitTimeout: 5 * time.Second, CallTimeout: time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		b.Do(context.Background(), "dep", status(200)) // the token of 0 s; the next comes at 1 s
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if r := b.Do(ctx, "dep", status(200)); r.Class != Error || !errors.Is(r.Err, context.DeadlineExceeded) || r.RateWait != 100*time.Millisecond {
			t.Errorf("%s (%v) after %v for the token; want error with the context's deadline after 100 ms", r.Class, r.Err, r.RateWait)
		}
		// Given back: the next caller, at 100 ms, has the token of 1 s, not 2 s.
		if r := b.Do(context.Background(), "dep", status(200)); r.Class != OK || r.RateWait != 900*time.Millisecond {
			t.Errorf("next caller: %s after %v for the token; want ok after 900 ms", r.Class, r.RateWait)
		}
	})
}

// No permit is held while waiting for a token: a budget waiting for its
// next token does not keep another budget on the same pool from calling.
func TestNoPermitHeldWhileWaitingForAToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := newMetrics(t)
		pool := NewPool(1)
		slow, err := New("slow", Config{Limiter: pool, Rate: 1, Burst: 1, PermitTimeout: 5 * time.Second, CallTimeout: time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		free, err := New("free", Config{Limiter: pool, PermitTimeout: 5 * time.Second, CallTimeout: time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		sleep := func(context.Context) (int, error) { time.Sleep(10 * time.Millisecond); return 200, nil }
		slow.Do(context.Background(), "slow", sleep) // 0–10 ms; slow's next token comes at 1 s
		time.Sleep(10 * time.Millisecond)
		var waiter Result
		var wg sync.WaitGroup
		wg.Go(func() { waiter = slow.Do(context.Background(), "slow", sleep) }) // from 20 ms
		time.Sleep(10 * time.Millisecond)
		r := free.Do(context.Background(), "free", sleep) // at 30 ms
		wg.Wait()
		if r.Class != OK || r.PermitWait != 0 {
			t.Errorf("the other budget: %s after %v for the permit; want ok at once", r.Class, r.PermitWait)
		}
		if waiter.Class != OK || waiter.RateWait != 980*time.Millisecond || waiter.PermitWait != 0 {
			t.Errorf("the waiter: %s after %v for the token and %v for the permit; want ok after 980 ms and 0",
				waiter.Class, waiter.RateWait, waiter.PermitWait)
		}
	})
}

// No limiter with a rate limits the rate alone: calls in flight are not capped.
func TestRateOnlyBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := newMetrics(t)
		b, err := New("b", Config{Rate: 1000, Burst: 10, PermitTimeout: time.Second, CallTimeout: time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() { b.Do(context.Background(), "dep", block(release)) })
		}
		synctest.Wait()
		if n := m.InFlight("dep"); n != 10 {
			t.Errorf("%d calls in flight, want all 10", n)
		}
		close(release)
		wg.Wait()
	})
}

func TestCallerCancellationIsAnError(t *testing.T) {
	m, _ := newMetrics(t)
	b, err := New("b", Config{Limiter: Fixed(1), PermitTimeout: time.Second, CallTimeout: time.Second}, m)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := b.Do(ctx, "dep", block(nil)); got.Class != Error || !errors.Is(got.Err, context.Canceled) {
		t.Errorf("class %s err %v, want error with context.Canceled", got.Class, got.Err)
	}
	// The permit was not kept.
	if got := b.Do(context.Background(), "dep", status(200)); got.Class != OK {
		t.Errorf("next call: %s", got.Class)
	}
}

func TestConfigValidationNamesTheField(t *testing.T) {
	m, _ := newMetrics(t)
	ok := Config{Limiter: Fixed(1), PermitTimeout: time.Second, CallTimeout: time.Second}
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"zero limit", func(c *Config) { c.Limiter = Fixed(0) }, "limit: 0 must be ≥ 1"},
		{"negative limit", func(c *Config) { c.Limiter = Fixed(-2) }, "limit: -2 must be ≥ 1"},
		{"the zero pool", func(c *Config) { c.Limiter = &Pool{} }, "limit: 0 must be ≥ 1"},
		{"a nil pool", func(c *Config) { c.Limiter = (*Pool)(nil) }, "limit: a nil *Pool"},
		{"the zero adaptive", func(c *Config) { c.Limiter = &Adaptive{} }, "adaptive: an Adaptive with no algorithm"},
		{"a nil adaptive", func(c *Config) { c.Limiter = (*Adaptive)(nil) }, "adaptive: an Adaptive with no algorithm"},
		{"an invalid algorithm", func(c *Config) { c.Limiter = &Adaptive{alg: AIMD{}} }, "adaptive: floor: 0 must be ≥ 1"},
		{"negative rate", func(c *Config) { c.Rate = -1 }, "rate:"},
		{"NaN rate", func(c *Config) { c.Rate = math.NaN() }, "rate:"},
		{"zero permit timeout", func(c *Config) { c.PermitTimeout = 0 }, "permit_timeout:"},
		{"zero permit timeout with a rate alone", func(c *Config) { c.Limiter, c.Rate, c.PermitTimeout = nil, 1, 0 }, "permit_timeout:"},
		{"negative permit timeout, no waits", func(c *Config) { c.Limiter, c.PermitTimeout = nil, -time.Second }, "permit_timeout:"},
		{"negative call timeout", func(c *Config) { c.CallTimeout = -time.Second }, "call_timeout:"},
		{"zero call timeout, no waits", func(c *Config) { c.Limiter, c.CallTimeout = nil, 0 }, "call_timeout:"},
		{"negative burst", func(c *Config) { c.Burst = -1 }, "burst:"},
		{"rejections without successes", func(c *Config) { c.Rejection = []int{503} }, "rejection: [503] needs success statuses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.change(&c)
			_, err := New("x", c, m)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "budgets: x: ") {
				t.Errorf("got %v, want it to name the budget", err)
			}
		})
	}
	for name, c := range map[string]Config{
		"a pool alone":            {Limiter: NewPool(1), PermitTimeout: time.Second, CallTimeout: time.Second},
		"a call timeout alone":    {CallTimeout: time.Second},
		"no limiter, no rate":     {PermitTimeout: time.Second, CallTimeout: time.Second},
		"successes, no rejection": {Success: []int{200}, CallTimeout: time.Second},
	} {
		if _, err := New(name, c, m); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A budget with no limiter and no rate limits only the call's time: calls
// do not wait and are not capped, and each is still recorded.
func TestNoLimiterNoRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, reg := newMetrics(t)
		b, err := New("u", Config{CallTimeout: 50 * time.Millisecond}, m)
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() { b.Do(context.Background(), "dep", block(release)) })
		}
		synctest.Wait()
		if n := m.InFlight("dep"); n != 20 {
			t.Errorf("%d calls in flight, want all 20", n)
		}
		close(release)
		wg.Wait()
		if r := b.Do(context.Background(), "dep", block(nil)); r.Class != CallTimeout || r.Latency != 50*time.Millisecond {
			t.Errorf("%s after %v, want call_timeout after 50 ms", r.Class, r.Latency)
		}
		if got := m.Snapshot()["dep"].Calls; got[OK] != 20 || got[CallTimeout] != 1 {
			t.Errorf("counted %v, want 20 ok and 1 call_timeout", got)
		}
		for _, metric := range []string{"loadlab_client_rate_wait_seconds", "loadlab_client_permit_wait_seconds"} {
			if n := observations(t, reg, metric, "dep"); n != 0 {
				t.Errorf("%s: %d observations of waits the budget does not have", metric, n)
			}
		}
	})
}

// A Config's statuses replace the default judging: its success statuses
// are OK, its rejection statuses Rejected, every other an Error. The budget
// keeps its own copy: changing the caller's slices later changes nothing.
func TestConfigStatuses(t *testing.T) {
	m, _ := newMetrics(t)
	success, rejection := []int{200, 299}, []int{409}
	b, err := New("s", Config{CallTimeout: time.Second, Success: success, Rejection: rejection}, m)
	if err != nil {
		t.Fatal(err)
	}
	success[0], rejection[0] = 503, 200
	for code, want := range map[int]Class{200: OK, 299: OK, 201: Error, 409: Rejected, 503: Error, 429: Error} {
		if got := b.Do(context.Background(), "dep", status(code)).Class; got != want {
			t.Errorf("status %d: %s, want %s", code, got, want)
		}
	}
	if c := b.Config(); c.Success[0] != 200 || c.Rejection[0] != 409 {
		t.Errorf("config %v %v, want the statuses given to New", c.Success, c.Rejection)
	}
	// An empty, not nil, success list: custom judging that finds nothing OK.
	none, err := New("n", Config{CallTimeout: time.Second, Success: []int{}}, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []int{200, 503} {
		if got := none.Do(context.Background(), "dep", status(code)).Class; got != Error {
			t.Errorf("empty success list, status %d: %s, want error", code, got)
		}
	}
}

// Several budgets on one pool never have more calls in flight together than
// the pool holds.
func TestPoolCapsBudgetsTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := newMetrics(t)
		pool := NewPool(2)
		cfg := Config{Limiter: pool, PermitTimeout: time.Second, CallTimeout: time.Second}
		a, err := New("a", cfg, m)
		if err != nil {
			t.Fatal(err)
		}
		b, err := New("b", cfg, m)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		inFlight, peak := 0, 0
		call := func(context.Context) (int, error) {
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight)
			if pool.InUse() < inFlight { // every call in flight holds a permit
				t.Errorf("pool says %d permits in use, %d calls in flight", pool.InUse(), inFlight)
			}
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			inFlight--
			mu.Unlock()
			return 200, nil
		}
		start := time.Now()
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() { a.Do(context.Background(), "a", call) })
			wg.Go(func() { b.Do(context.Background(), "b", call) })
		}
		wg.Wait()
		// 6 calls of 100 ms, 2 at a time: three rounds.
		if el := time.Since(start); peak != 2 || el != 300*time.Millisecond {
			t.Errorf("peak %d calls in flight, done after %v; want 2 and 300 ms", peak, el)
		}
		if pool.InUse() != 0 || pool.Limit() != 2 {
			t.Errorf("after the calls: %d of %d permits in use, want 0 of 2", pool.InUse(), pool.Limit())
		}
	})
}

func TestPoolInvariantsPanic(t *testing.T) {
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"no permits", func() { NewPool(0) }, "budgets: NewPool(0): a pool needs at least 1 permit"},
		{"released more than held", func() { NewPool(1).release(Outcome{}, true) }, "budgets: pool: released more permits than held"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if got := recover(); got != tt.want {
					t.Errorf("panic %v, want %q", got, tt.want)
				}
			}()
			tt.f()
		})
	}
}

// C3 with rates: two budgets on one pool of 2 permits, enrichment at 2
// tokens/s and records at 0.5/s (burst 1 each), a permit timeout of 1.5 s
// for both waits together, calls of 1.25 s. (Times are multiples of 1/8 s,
// so the limiter's float arithmetic is exact.) Callers arrive at fixed
// times; worked out by hand, in ms:
//
//	caller  arrives  token (rate wait)          permit (permit wait)       class
//	e1        0      0 (0)                      0 (0)                      ok, 0–1250
//	r1      125      125 (0)                    125 (0)                    ok, 125–1375
//	e2      250      500 (250)                  1250, e1's (750)           ok, 1250–2500
//	r2      375      next at 2125 ≥ 1875: none  —                          rate_timeout at 1875 (1500)
//	e3      500      1000 (500)                 1375, r1's (375)           ok, 1375–2625
//	e4      625      1500 (875)                 none by 2125 (625)         permit_timeout, token spent
//	e5      750      2000 (1250): e4's spent    none by 2250 (250)         permit_timeout
//	r3     2375      2375 (0): r2 took none     2500, e2's (125)           ok, 2500–3750
//
// Enrichment's tokens come 500 ms apart and records' 2 s apart, each budget
// on its own rate; never more than 2 calls in flight together.
func TestSharedPoolWithARatePerBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, reg := newMetrics(t)
		pool := NewPool(2)
		ms := time.Millisecond
		enrich, err := New("enrichment", Config{Limiter: pool, Rate: 2, Burst: 1, PermitTimeout: 1500 * ms, CallTimeout: 2 * time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		records, err := New("records", Config{Limiter: pool, Rate: 0.5, Burst: 1, PermitTimeout: 1500 * ms, CallTimeout: 2 * time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		inFlight, peak := 0, 0
		call := func(context.Context) (int, error) {
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight)
			mu.Unlock()
			time.Sleep(1250 * ms)
			mu.Lock()
			inFlight--
			mu.Unlock()
			return 200, nil
		}
		type want struct {
			class                Class
			rateWait, permitWait time.Duration
		}
		callers := []struct {
			name    string
			b       *Budget
			arrives time.Duration
			want    want
		}{
			{"e1", enrich, 0, want{OK, 0, 0}},
			{"r1", records, 125 * ms, want{OK, 0, 0}},
			{"e2", enrich, 250 * ms, want{OK, 250 * ms, 750 * ms}},
			{"r2", records, 375 * ms, want{RateTimeout, 1500 * ms, 0}},
			{"e3", enrich, 500 * ms, want{OK, 500 * ms, 375 * ms}},
			{"e4", enrich, 625 * ms, want{PermitTimeout, 875 * ms, 625 * ms}},
			{"e5", enrich, 750 * ms, want{PermitTimeout, 1250 * ms, 250 * ms}},
			{"r3", records, 2375 * ms, want{OK, 0, 125 * ms}},
		}
		got := make([]Result, len(callers))
		start := time.Now()
		var wg sync.WaitGroup
		for i, c := range callers {
			wg.Go(func() {
				time.Sleep(c.arrives)
				got[i] = c.b.Do(context.Background(), c.b.Name(), call)
			})
		}
		wg.Wait()
		for i, c := range callers {
			g := want{got[i].Class, got[i].RateWait, got[i].PermitWait}
			if g != c.want {
				t.Errorf("%s: %s after %v for the token, %v for the permit; want %s after %v and %v",
					c.name, g.class, g.rateWait, g.permitWait, c.want.class, c.want.rateWait, c.want.permitWait)
			}
		}
		if el := time.Since(start); peak != 2 || el != 3750*ms {
			t.Errorf("peak %d calls in flight, last done at %v; want 2, 3.75 s", peak, el)
		}
		wantCalls := `
# HELP loadlab_client_calls_total Calls by how they ended: ok, rejected, call_timeout, permit_timeout, rate_timeout, error.
# TYPE loadlab_client_calls_total counter
loadlab_client_calls_total{class="call_timeout",dependency="enrichment"} 0
loadlab_client_calls_total{class="error",dependency="enrichment"} 0
loadlab_client_calls_total{class="ok",dependency="enrichment"} 3
loadlab_client_calls_total{class="permit_timeout",dependency="enrichment"} 2
loadlab_client_calls_total{class="rate_timeout",dependency="enrichment"} 0
loadlab_client_calls_total{class="rejected",dependency="enrichment"} 0
loadlab_client_calls_total{class="call_timeout",dependency="records"} 0
loadlab_client_calls_total{class="error",dependency="records"} 0
loadlab_client_calls_total{class="ok",dependency="records"} 2
loadlab_client_calls_total{class="permit_timeout",dependency="records"} 0
loadlab_client_calls_total{class="rate_timeout",dependency="records"} 1
loadlab_client_calls_total{class="rejected",dependency="records"} 0
`
		if err := testutil.GatherAndCompare(reg, strings.NewReader(wantCalls), "loadlab_client_calls_total"); err != nil {
			t.Error(err)
		}
		// Every caller waited for a token; r2 never reached the permit wait,
		// so it is not observed there as a wait of 0.
		for _, h := range []struct {
			metric, dependency string
			want               uint64
		}{
			{"loadlab_client_rate_wait_seconds", "enrichment", 5},
			{"loadlab_client_rate_wait_seconds", "records", 3},
			{"loadlab_client_permit_wait_seconds", "enrichment", 5},
			{"loadlab_client_permit_wait_seconds", "records", 2},
		} {
			if n := observations(t, reg, h.metric, h.dependency); n != h.want {
				t.Errorf("%s{dependency=%q}: %d observations, want %d", h.metric, h.dependency, n, h.want)
			}
		}
	})
}

// observations returns how many values the histogram metric holds for
// dependency.
func observations(t *testing.T, reg *prometheus.Registry, metric, dependency string) uint64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != metric {
			continue
		}
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "dependency" && l.GetValue() == dependency {
					return mt.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}

// Count adds one class over every dependency, and nothing of the others.
func TestCountAddsAClassOverDependencies(t *testing.T) {
	calls := map[string]map[Class]int{
		"lookup": {Rejected: 3, OK: 7},
		"ledger": {Rejected: 2, CallTimeout: 1},
		"geo":    {OK: 4},
	}
	if n := Count(calls, Rejected); n != 5 {
		t.Errorf("rejected: %d, want 5", n)
	}
	if n := Count(calls, OK); n != 11 {
		t.Errorf("ok: %d, want 11", n)
	}
	if n := Count(nil, Rejected); n != 0 {
		t.Errorf("no calls: %d", n)
	}
}
