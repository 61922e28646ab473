package probe

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/mockservice/field"
)

// ErrFirstStepFailed is wrapped by Run's error when no request of the
// first step succeeded (the target refuses connections, answers only
// errors, or answers nothing in time): there is nothing to measure.
var ErrFirstStepFailed = errors.New("the first step failed entirely")

// Run probes cfg.Target step by step and returns the measured steps and
// their analysis. onStep, when not nil, is called after each step.
//
// Each step starts N users from an idle target, lets them run for the
// warm-up, measures them for cfg.Step, then stops them and waits for
// their requests in flight (each bounded by cfg.Timeout) so that the next
// step starts idle again. A probe stops after the last step, at a stop
// limit, before a step that would not fit in cfg.MaxDuration, or when ctx
// ends: then the result is Partial, with the steps completed. Its error is
// a validation error, or ErrFirstStepFailed with the reason (the result
// then holds the first step and no analysis).
func Run(ctx context.Context, cfg Config, onStep func(Step)) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	e, err := newEngine(cfg)
	if err != nil {
		return Result{}, err
	}
	defer e.client.CloseIdleConnections()
	res := Result{Plan: cfg.Plan(), Steps: []Step{}, StartedAt: time.Now().UTC()}
	begin := time.Now()
	// The hard bound: whatever happens (a long drain included), nothing
	// is sent or awaited after MaxDuration.
	runCtx, cancel := context.WithTimeout(ctx, cfg.MaxDuration)
	defer cancel()
	for i, n := range res.Plan.Concurrency {
		if left := cfg.MaxDuration - time.Since(begin); cfg.WarmUp+cfg.Step > left {
			res.stop(fmt.Sprintf("--max-duration %v: no time left for the step at concurrency %d (it needs %v, %v left)",
				cfg.MaxDuration, n, cfg.WarmUp+cfg.Step, left.Round(time.Millisecond)))
			break
		}
		st, failedEarly := e.step(runCtx, n, i == 0)
		if ctx.Err() != nil { // interrupted: the step is incomplete, not reported
			res.Partial = true
			res.stop("interrupted")
			break
		}
		res.Steps = append(res.Steps, st)
		if onStep != nil && failedEarly == "" { // a step given up on early has no measured figures to show
			onStep(st)
		}
		if i == 0 && (st.OK == 0 || failedEarly != "") {
			res.DurationSeconds = time.Since(begin).Seconds()
			why := firstStepReason(st)
			if failedEarly != "" {
				why = failedEarly
			}
			return res, fmt.Errorf("%w: %s", ErrFirstStepFailed, why)
		}
		reason := cfg.stopReason(st)
		if reason == "" && runCtx.Err() != nil {
			reason = fmt.Sprintf("--max-duration %v reached during the step at concurrency %d", cfg.MaxDuration, n)
		}
		if reason != "" && i < len(res.Plan.Concurrency)-1 { // after the last step there is nothing to stop
			res.stop(reason)
			break
		}
	}
	res.DurationSeconds = time.Since(begin).Seconds()
	res.Analysis = Analyse(res.Steps)
	return res, nil
}

// stopReason says why the probe must stop after st, or "".
func (c Config) stopReason(st Step) string {
	if st.Requests == 0 {
		return fmt.Sprintf("no request completed in the %v window at concurrency %d (slower than the step?)", c.Step, st.Concurrency)
	}
	total := float64(st.Requests)
	if r := float64(st.Rejected) / total; r > c.StopRejectionRatio {
		return fmt.Sprintf("rejection ratio %.3f at concurrency %d is above --stop-rejection-ratio %g", r, st.Concurrency, c.StopRejectionRatio)
	}
	if r := float64(st.Errors+st.Timeouts) / total; r > c.StopErrorRatio {
		return fmt.Sprintf("error and timeout ratio %.3f at concurrency %d is above --stop-error-ratio %g", r, st.Concurrency, c.StopErrorRatio)
	}
	if c.StopP99 > 0 && st.P99Seconds != nil && *st.P99Seconds > c.StopP99.Seconds() {
		return fmt.Sprintf("p99 %.3f s at concurrency %d is above --stop-p99 %v", *st.P99Seconds, st.Concurrency, c.StopP99)
	}
	return ""
}

// firstStepReason says what the first step's requests met instead of
// success.
func firstStepReason(st Step) string {
	if st.Requests == 0 {
		return fmt.Sprintf("no request completed within the %.3g s window at concurrency %d", st.WindowSeconds, st.Concurrency)
	}
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(st.ErrorKinds)) {
		kinds = append(kinds, fmt.Sprintf("%s ×%d", k, st.ErrorKinds[k]))
	}
	s := fmt.Sprintf("none of its %d requests succeeded: %d rejected, %d timed out, %d errors", st.Requests, st.Rejected, st.Timeouts, st.Errors)
	if len(kinds) > 0 {
		s += " (" + strings.Join(kinds, ", ") + ")"
	}
	return s
}

// engine sends the probe's requests.
type engine struct {
	cfg     Config
	client  *http.Client
	limiter *rate.Limiter
	body    *bodyMaker
	req     *http.Request // every request is a copy of it, with its own body and context
	seq     atomic.Uint64
	rejects []int
}

// RateBurst is the token bucket's depth as a duration at MaxRate: over
// any interval T at most max(1, MaxRate·RateBurst) + MaxRate·T requests
// start. A bucket of one token would space every two requests by
// 1/MaxRate, and users that finish together would wait for each other
// (at 2000/s, up to 0.5 ms each): a delay the target did not cause.
const RateBurst = 10 * time.Millisecond

func newEngine(cfg Config) (*engine, error) {
	var id [6]byte
	_, _ = rand.Read(id[:])
	body, err := newBodyMaker(cfg.Body, "probe-"+hex.EncodeToString(id[:])+"-")
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.Target)
	if err != nil {
		return nil, field.Errorf("target", "%w", err)
	}
	headers := cfg.Headers.Clone()
	if headers == nil {
		headers = http.Header{}
	}
	if cfg.Body != "" && headers.Get("Content-Type") == "" {
		headers.Set("Content-Type", "application/json")
	}
	burst := max(1, int(cfg.MaxRate*RateBurst.Seconds()))
	return &engine{cfg: cfg, client: transport.NewDial(cfg.MaxConcurrency, cfg.Dial), body: body, rejects: cfg.rejectStatuses(),
		limiter: rate.NewLimiter(rate.Limit(cfg.MaxRate), burst),
		req: &http.Request{Method: cfg.Method, URL: u, Host: u.Host, Header: headers,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}}, nil
}

// FailFastAfter is how many requests of the first step may fail, none
// succeeding, before the probe gives up on the target.
const FailFastAfter = 20

// step runs n users for a warm-up and a measured window, then drains.
// The first step is abandoned at the end of its window when nothing has
// succeeded by then: it has failed whatever its requests in flight do,
// and a target that never answers should not hold the probe for a timeout.
func (e *engine) step(ctx context.Context, n int, first bool) (st Step, failed string) {
	start := time.Now()
	rec := newRecorder(start.Add(e.cfg.WarmUp), e.cfg.Step)
	reqCtx, abandon := context.WithCancel(ctx)
	defer abandon()
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	// The first step ends at once when its first FailFastAfter requests
	// all failed: a target that refuses everything is not sent a whole
	// step of requests (at most one more per user is in flight).
	early := make(chan string, 1)
	check := func() {}
	if first {
		check = func() {
			if f := rec.failedEarly(FailFastAfter); f != "" {
				select {
				case early <- f:
				default:
				}
				stop()
			}
		}
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { e.user(reqCtx, stopCtx, rec, check) })
	}
	t := time.NewTimer(time.Until(rec.to))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case failed = <-early:
	}
	stop() // users send nothing more
	if first && rec.succeeded() == 0 {
		abandon()
	}
	wg.Wait() // and their requests in flight end (timeout, or ctx)
	return rec.step(n, e.cfg.MaxRate), failed
}

// user is one closed-loop user: wait for a rate token, send, wait for the
// answer, record it, again, until stopped.
func (e *engine) user(ctx, stopCtx context.Context, rec *recorder, check func()) {
	for stopCtx.Err() == nil {
		if e.limiter.Wait(stopCtx) != nil {
			return
		}
		start, end, o, kind, retryAfter := e.do(ctx)
		if o == outCancelled {
			return
		}
		rec.add(start, end, o, kind)
		rec.retryAfter(retryAfter)
		check()
	}
}

type outcome uint8

const (
	outOK outcome = iota
	outRejected
	outTimeout
	outError
	outCancelled // the probe stopped: not a measurement
)

// do sends one request and classifies its answer: kind is an error's
// short description, or a rejection's status; retryAfter is what a
// rejection's Retry-After asked for. The request lasts from just before it
// is handed to the client to the end of its answer's body.
func (e *engine) do(ctx context.Context) (start, end time.Time, o outcome, kind string, retryAfter time.Duration) {
	seq := e.seq.Add(1)
	body, err := e.body.make(seq)
	if err != nil {
		now := time.Now()
		return now, now, outError, "body template: " + err.Error(), 0
	}
	rctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	req := e.req.WithContext(rctx) // a copy; URL and headers are shared, never changed
	if len(body) > 0 {
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	status, after := 0, ""
	start = time.Now()
	resp, err := e.client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status, after = resp.StatusCode, resp.Header.Get("Retry-After")
	}
	end = time.Now()
	switch {
	case ctx.Err() != nil:
		return start, end, outCancelled, "", 0
	case err != nil && errors.Is(rctx.Err(), context.DeadlineExceeded):
		return start, end, outTimeout, "", 0
	case err != nil:
		return start, end, outError, errKind(err), 0
	case e.isOK(status):
		return start, end, outOK, strconv.Itoa(status), 0
	case slices.Contains(e.rejects, status):
		return start, end, outRejected, strconv.Itoa(status), parseRetryAfter(after, end)
	}
	return start, end, outError, "status " + strconv.Itoa(status), 0
}

// parseRetryAfter is a Retry-After header's delay (RFC 9110: seconds, or
// an HTTP date, taken from now); 0 when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func (e *engine) isOK(status int) bool {
	if len(e.cfg.OKStatuses) == 0 {
		return status >= 200 && status <= 299
	}
	return slices.Contains(e.cfg.OKStatuses, status)
}

// errKind shortens a transport error to what went wrong, without the
// method and URL every one of them would repeat ("Post \"…\": dial tcp
// 127.0.0.1:1: connect: connection refused" → "connect: connection
// refused"; "Get \"…\": EOF" → "EOF").
func errKind(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	parts := strings.Split(err.Error(), ": ")
	return strings.Join(parts[max(0, len(parts)-2):], ": ")
}
