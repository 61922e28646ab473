package probe

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// quick is a probe of url with short steps.
func quick(url string, steps ...int) Config {
	cfg := Default()
	cfg.Target, cfg.Concurrency = url, steps
	cfg.Step, cfg.WarmUp = 200*time.Millisecond, 50*time.Millisecond
	return cfg
}

// The probe sends the named method to the named path and query and
// nothing else (no identification, admin, health or metrics request),
// each body with an id of its own; and over the whole probe no more
// requests than --max-rate allows, though every answer is instant.
func TestProbeSendsOnlyNamedMethodAndPath(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testSendsOnlyNamedMethodAndPath)
}

func testSendsOnlyNamedMethodAndPath(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	ids := map[string]bool{}
	dup, badType := 0, 0
	url, dial := mocktest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ ID string }
		err := json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		seen[r.Method+" "+r.URL.RequestURI()]++
		if err != nil || ids[body.ID] {
			dup++
		}
		ids[body.ID] = true
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Probe") != "yes" {
			badType++
		}
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	// On the fake clock every answer takes no time: only --max-rate
	// bounds the probe.
	cfg := quick(url+"/only/this?x=1", 1, 4, 16)
	cfg.Dial = dial
	cfg.Method, cfg.Body, cfg.Headers = http.MethodPut, `{"id":"{{.ID}}"}`, http.Header{"X-Probe": {"yes"}}
	cfg.MaxRate = 200
	start := time.Now()
	res, err := Run(context.Background(), cfg, nil)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	n := seen["PUT /only/this?x=1"]
	if len(seen) != 1 || n == 0 || dup > 0 || badType > 0 {
		t.Errorf("the server saw %v (%d repeated or unreadable ids, %d without the headers); want PUT /only/this?x=1 alone", seen, dup, badType)
	}
	// Burst 2 (10 ms at 200/s) plus 200 per second of the probe.
	if limit := 2 + 200*elapsed.Seconds(); float64(n) > limit {
		t.Errorf("%d requests in %v: more than --max-rate 200/s allows (%.0f)", n, elapsed, limit)
	}
	for _, s := range res.Steps {
		if !s.AtRateLimit || s.OKPerSecond > 210 || s.OKPerSecond < 190 {
			t.Errorf("step %d: %.1f ok/s, at rate limit %v; want the limit to bind at 200/s", s.Concurrency, s.OKPerSecond, s.AtRateLimit)
		}
	}
	if len(res.Notes) == 0 || !strings.Contains(strings.Join(res.Notes, " "), "--max-rate") {
		t.Errorf("notes %q: want the plateau flagged as the probe's own limit", res.Notes)
	}
}

// Steps that do not fit in the max duration are not started: the probe
// stops at the bound, says so, and takes no longer.
func TestProbeStopsAtMaxDuration(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testStopsAtMaxDuration)
}

func testStopsAtMaxDuration(t *testing.T) {
	url, dial := mocktest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(time.Millisecond) }))
	cfg := quick(url, 1, 2, 3, 4, 5) // 5 × 250 ms
	cfg.Dial = dial
	cfg.MaxDuration = 700 * time.Millisecond
	if p := cfg.Plan(); p.FitSteps != 2 {
		t.Errorf("plan: %d steps fit, want 2", p.FitSteps)
	}
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 || !res.StoppedEarly || !strings.Contains(res.StopReason, "--max-duration") || res.DurationSeconds > 0.7 {
		t.Errorf("%d steps in %.3f s, stopped early %v %q; want 2 within 0.7 s, stopped at --max-duration",
			len(res.Steps), res.DurationSeconds, res.StoppedEarly, res.StopReason)
	}
}

// A target that refuses connections, or never answers, fails the first
// step: ErrFirstStepFailed with the reason, no analysis, and no wait for
// the request timeout.
func TestProbeFirstStepFails(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testFirstStepFails)
}

func testFirstStepFails(t *testing.T) {
	nw := mocktest.NewNetwork()
	refused := "http://nobody.memory:80/records"
	silent, err := nw.Listen("silent.memory:80")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		silent.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	for target, want := range map[string]string{refused: "connection refused", "http://" + silent.Addr().String() + "/": "no request completed"} {
		start := time.Now()
		cfg := quick(target, 1, 2)
		cfg.Dial = nw.Dial
		res, err := Run(context.Background(), cfg, nil)
		if !errors.Is(err, ErrFirstStepFailed) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want ErrFirstStepFailed, %q", target, err, want)
		}
		if el := time.Since(start); el > 2*time.Second || len(res.Steps) != 1 || res.Knee != nil || res.USL.Sigma != nil {
			t.Errorf("%s: %v, %d steps, knee %v, fit %v; want one step within 2 s and no analysis", target, el, len(res.Steps), res.Knee, res.USL.Sigma)
		}
	}
	// A target that answers every request with an error is given up on
	// after the first FailFastAfter of them, not sent a whole step.
	var sent atomic.Int64
	url, dial := mocktest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		time.Sleep(time.Millisecond)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	cfg := quick(url, 1, 2)
	cfg.Dial = dial
	cfg.Step, cfg.WarmUp = 2*time.Second, 500*time.Millisecond // 2.5 s of a step at ~1 ms per request: ~2 000 requests
	start := time.Now()
	_, err = Run(context.Background(), cfg, nil)
	if n := sent.Load(); !errors.Is(err, ErrFirstStepFailed) || !strings.Contains(err.Error(), "its first 20 requests failed and none succeeded (status 500 ×20)") ||
		n > FailFastAfter+1 || time.Since(start) > time.Second {
		t.Errorf("a target answering 500: %v; %d requests sent in %v", err, n, time.Since(start))
	}
}

// Every request is classified: 201 ok, 429 rejected, 500 an error,
// beyond the timeout a timeout; and the probe stops after the step whose
// errors cross the limit.
func TestProbeClassifiesAndStopsAtErrors(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testClassifiesAndStopsAtErrors)
}

func testClassifiesAndStopsAtErrors(t *testing.T) {
	var inFlight, n atomic.Int64
	url, dial := mocktest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		// Every 4th request rejected, every 10th (5, 15, …: never a 4th)
		// beyond the timeout: any 10 requests in a row hold both, and
		// concurrency 1's step of 0.5 s on the fake clock holds 35 answers
		// of 20 ms, 14 rejections and 3 timeouts of 50 ms.
		switch i := n.Add(1); {
		case i%4 == 0:
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
		case i%10 == 5:
			time.Sleep(100 * time.Millisecond) // beyond the timeout
		default:
			// More than 2 at once (not counting the timed out) fail.
			defer inFlight.Add(-1)
			if inFlight.Add(1) > 2 {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			time.Sleep(20 * time.Millisecond)
			w.WriteHeader(http.StatusCreated)
		}
	}))
	cfg := quick(url, 1, 2, 4, 8)
	cfg.Dial = dial
	cfg.Step, cfg.Timeout = 500*time.Millisecond, 50*time.Millisecond
	cfg.StopRejectionRatio, cfg.StopErrorRatio = 1, 0.3
	res, err := Run(context.Background(), cfg, func(s Step) { t.Log(StepLine(s)) })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 3 || !strings.Contains(res.StopReason, "error and timeout ratio") {
		t.Fatalf("%d steps, stop %q; want a stop at the error limit after concurrency 4", len(res.Steps), res.StopReason)
	}
	one, four := res.Steps[0], res.Steps[2]
	if one.OK == 0 || one.Rejected == 0 || one.Timeouts == 0 || one.Errors != 0 || one.RejectedPerSecond == 0 {
		t.Errorf("concurrency 1: %+v; want successes, rejections and timeouts, no errors", one)
	}
	if one.RejectedStatuses["429"] != one.Rejected || len(one.RejectedStatuses) != 1 || one.RetryAfterSeconds == nil || *one.RetryAfterSeconds != 3 {
		t.Errorf("concurrency 1: rejections by status %v of %d, Retry-After %v; want all 429, 3 s", one.RejectedStatuses, one.Rejected, orNil(one.RetryAfterSeconds))
	}
	if four.Errors == 0 || four.ErrorKinds["status 500"] != four.Errors {
		t.Errorf("concurrency 4: %d errors %v; want status 500s", four.Errors, four.ErrorKinds)
	}
	if *res.RejectionsBeginAt != 1 {
		t.Errorf("rejections begin at %d, want 1", *res.RejectionsBeginAt)
	}
}

// Interrupted, the probe returns the steps it completed, marked partial.
func TestProbeInterruptedIsPartial(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testInterruptedIsPartial)
}

func testInterruptedIsPartial(t *testing.T) {
	url, dial := mocktest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(time.Millisecond) }))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := quick(url, 1, 2, 3)
	cfg.Dial = dial
	res, err := Run(ctx, cfg, func(s Step) {
		if s.Concurrency == 1 {
			time.AfterFunc(100*time.Millisecond, cancel) // within the second step
		}
	})
	if err != nil || !res.Partial || len(res.Steps) != 1 || res.StopReason != "interrupted" {
		t.Errorf("err %v, partial %v, %d steps, stop %q; want 1 step, partial", err, res.Partial, len(res.Steps), res.StopReason)
	}
}

func orNil(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// Retry-After is seconds or an HTTP date (RFC 9110); anything else is none.
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"2", 2 * time.Second}, {" 120 ", 2 * time.Minute}, {"-1", 0}, {"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	} {
		if got := parseRetryAfter(c.in, now); got != c.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
