// Package replay sends workloads (the seeded ones of the concurrency
// simulation) over real HTTP to a mock service in replay mode and measures
// what the concurrency model computes: each request is served for exactly its workload
// duration, the client keeps at most a limit in flight and gives up at the
// timeout, the server finishes the work anyway.
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/field"
)

// NearTie is how close to its deadline (real time) a request's outcome may
// come before it is reported as a near-tie: within it, which of the two
// happened first depends on timers, not on the workload.
const NearTie = 5 * time.Millisecond

// Workload is one seeded workload: each request's service duration, in
// issue order, in lab time.
type Workload struct {
	Seed      uint32
	Durations []time.Duration
}

// Metrics are one trial's figures, under the concurrency model's keys
// and with its meaning; lab milliseconds. All are float64 so that a
// statistic of them (a median of an even count) can be a half.
type Metrics struct {
	Completed          float64 `json:"completed"`
	TimedOut           float64 `json:"timed_out"`
	ClientOutcomeMs    float64 `json:"client_outcome_ms"`
	ServerDrainMs      float64 `json:"server_drain_ms"`
	PeakInFlight       float64 `json:"peak_in_flight"`
	PeakQueue          float64 `json:"peak_queue"`
	P95QueueWaitMs     float64 `json:"p95_queue_wait_ms"`
	MaxQueueWaitMs     float64 `json:"max_queue_wait_ms"`
	WorkAfterTimeoutMs float64 `json:"work_after_timeout_ms"`
}

// Trial is one workload under one client limit, measured.
type Trial struct {
	Seed    uint32  `json:"seed"`
	Metrics Metrics `json:"metrics"`
	// NearTies counts requests whose client deadline came within NearTie
	// of the server's finish, or between that finish and where the model
	// puts it: earlier by how far the request fell behind the model's
	// timeline (its delay to admission, its service beyond its duration,
	// and what it inherited from the request whose finish freed its
	// worker); they are classified as observed (a 200 in time is
	// completed, else timed out), and counted here.
	NearTies int `json:"near_ties"`
	// AdmissionLagMs is the longest real delay in the workload from a
	// request's issue by the client to its admission by the station.
	AdmissionLagMs float64 `json:"admission_lag_ms"`
	// CallOverheadMs is the mean real time, in a chain of calls one after
	// another, from the server's finish of a call whose answer freed a slot
	// of the client's limit to the station's admission of the call the
	// client sent in its place (the answer's way back, the client's turn
	// to send, the request's way there). The model counts none; along a
	// chain it adds up. A limit the workload never reached has no chain:
	// then it is a completed call's time beyond the server's work (issue
	// to admission plus finish to outcome).
	CallOverheadMs float64 `json:"call_overhead_ms"`
	// ChainOverheadMs bounds what the overhead added along any one chain
	// of a limit reached (workload size / limit calls one after another):
	// the sum of that many of the longest links. None without a chain.
	ChainOverheadMs float64 `json:"chain_overhead_ms,omitempty"`
}

// Config is one replay: one client limit against one mock service.
type Config struct {
	// Target is the mock service's base URL; it must be in replay mode
	// with the scenario's workers and an unbounded FIFO queue.
	Target  string
	Token   string
	Limit   int
	Timeout time.Duration // the client's, lab time
	// TimeScale multiplies every duration; figures come back in lab
	// milliseconds.
	TimeScale float64
	// Dial opens the connections (nil: the system's dialer): an in-memory
	// wire, in tests whose clock is fake.
	Dial transport.Dialer
}

// Validate names the first bad field (a *field.Error).
func (c Config) Validate() error {
	switch {
	case c.Limit < 1:
		return field.Errorf("limit", "%d must be ≥ 1", c.Limit)
	case !(c.TimeScale > 0):
		return field.Errorf("time_scale", "%g must be > 0", c.TimeScale)
	case c.Timeout <= 0:
		return field.Errorf("timeout", "%v must be > 0", c.Timeout)
	}
	return nil
}

// Run replays one workload: it resets the mock service, sends the
// workload's requests in order with at most cfg.Limit in flight, waits for
// the server to finish every one, and reads the server's request log. The
// first request that fails (an answer other than 200 or a timeout) stops
// the replay with its error.
func Run(ctx context.Context, cfg Config, w Workload) (Trial, error) {
	if err := cfg.Validate(); err != nil {
		return Trial{}, fmt.Errorf("replay: %w", err)
	}
	n := len(w.Durations)
	if n == 0 {
		return Trial{}, fmt.Errorf("replay: workload %d has no requests", w.Seed)
	}
	ctx, cancel := context.WithCancel(ctx) // the first failure stops the rest
	defer cancel()
	mock := api.Client{BaseURL: cfg.Target, Token: cfg.Token}
	if cfg.Dial != nil {
		mock.HTTP = transport.NewDial(1, cfg.Dial)
	}
	if err := mock.Reset(ctx); err != nil {
		return Trial{}, fmt.Errorf("replay: reset: %w", err)
	}
	hc := transport.NewDial(min(cfg.Limit, n), cfg.Dial)
	defer hc.CloseIdleConnections()
	if err := predial(ctx, hc, cfg.Target, min(cfg.Limit, n), cfg.Dial); err != nil {
		return Trial{}, err
	}
	rec, err := issue(ctx, cancel, hc, cfg, w)
	if err != nil {
		return Trial{}, err
	}
	// The server finishes every request's work: at most the sum of the
	// durations after the last issue, at the time scale, plus a margin.
	var work time.Duration
	for _, d := range w.Durations {
		work += d
	}
	snap, err := waitLog(ctx, mock, n, 10*time.Second+time.Duration(float64(work)*cfg.TimeScale))
	if err != nil {
		return Trial{}, err
	}
	st, err := mock.Stats(ctx)
	if err != nil {
		return Trial{}, fmt.Errorf("replay: stats: %w", err)
	}
	t, err := measure(w, rec, snap, cfg.TimeScale, cfg.Limit)
	// The station's own longest queue since the reset.
	t.Metrics.PeakQueue = float64(st.Stations[api.Enrichment].HighWater.Queue)
	return t, err
}

// record is what the client saw of a workload's requests, in real time.
type record struct {
	start   time.Time     // the first issue
	timeout time.Duration // the client's, real time
	issue   []time.Time
	outcome []time.Time // the answer, or the deadline when the client gave up
	done    []bool      // answered 200 within the timeout
	peak    int         // the most requests in flight at once
}

// issue sends the workload's requests in order, each as soon as fewer
// than cfg.Limit are in flight, and waits for every outcome. The first
// failure cancels the rest (cancel is ctx's) and is returned.
func issue(ctx context.Context, cancel context.CancelFunc, hc *http.Client, cfg Config, w Workload) (record, error) {
	n := len(w.Durations)
	rec := record{timeout: time.Duration(float64(cfg.Timeout) * cfg.TimeScale),
		issue: make([]time.Time, n), outcome: make([]time.Time, n), done: make([]bool, n)}
	var mu sync.Mutex
	inFlight := 0
	sem := make(chan struct{}, cfg.Limit)
	var wg sync.WaitGroup
	var failure error
	rec.start = time.Now()
	for i, d := range w.Durations {
		sem <- struct{}{}
		mu.Lock()
		inFlight++
		rec.peak = max(rec.peak, inFlight)
		mu.Unlock()
		rec.issue[i] = time.Now()
		deadline := rec.issue[i].Add(rec.timeout)
		wg.Go(func() {
			ok, err := send(ctx, hc, cfg.Target, requestID(w.Seed, i), i, d, deadline)
			at := time.Now()
			if !ok {
				at = deadline // the client gave up then; noticing it later is not the outcome
			}
			mu.Lock()
			rec.outcome[i], rec.done[i] = at, ok
			if err != nil && failure == nil {
				failure = err
				cancel()
			}
			inFlight--
			mu.Unlock()
			<-sem
		})
	}
	wg.Wait()
	return rec, failure
}

// requestID is request i of workload seed's id.
func requestID(seed uint32, i int) string { return fmt.Sprintf("r%d-%d", seed, i) }

// send makes one replayed request; ok is a 200 within the timeout. An
// answer other than 200 or a timeout is an error: the replay is not valid.
func send(ctx context.Context, hc *http.Client, target, id string, seq int, d time.Duration, deadline time.Time) (ok bool, err error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	body, _ := json.Marshal(api.EnrichRequest{RecordID: id, Step: 1})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target+api.PathEnrich, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(api.HeaderRequestID, id)
	req.Header.Set(api.HeaderReplay, strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64))
	req.Header.Set(api.HeaderReplaySeq, strconv.Itoa(seq))
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, nil // gave up at the timeout
		}
		return false, fmt.Errorf("replay: %s: %w", id, err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil && ctx.Err() != nil {
		return false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("replay: %s: status %d (is the mock service in replay mode?)", id, resp.StatusCode)
	}
	return true, nil
}

// waitLog waits until the server has finished all n requests (it finishes
// timed-out work too) and returns its request log.
func waitLog(ctx context.Context, mock api.Client, n int, limit time.Duration) (api.RequestLogSnapshot, error) {
	deadline := time.Now().Add(limit)
	for {
		snap, err := mock.RequestLog(ctx)
		if err != nil {
			return snap, fmt.Errorf("replay: request log: %w", err)
		}
		if snap.Dropped > 0 || len(snap.Entries) > n {
			return snap, fmt.Errorf("replay: the server's request log holds %d entries and dropped %d: other traffic, or a log smaller than the workload", len(snap.Entries), snap.Dropped)
		}
		finished := 0
		for _, e := range snap.Entries {
			if e.Finished != nil {
				finished++
			}
		}
		if finished == n && len(snap.Entries) == n {
			return snap, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return snap, fmt.Errorf("replay: the server finished %d of %d requests", finished, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// measure computes the model's figures from the client's record and the
// server's request log, in lab milliseconds from the first issue (all but
// the peak queue, which Run reads from the station's high-water mark).
func measure(w Workload, rec record, snap api.RequestLogSnapshot, scale float64, limit int) (Trial, error) {
	seed, n := w.Seed, len(rec.issue)
	lab := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / scale }
	t := Trial{Seed: seed}
	m := &t.Metrics
	m.PeakInFlight = float64(rec.peak)
	var last time.Time
	for i := range n {
		if rec.done[i] {
			m.Completed++
		} else {
			m.TimedOut++
		}
		last = later(last, rec.outcome[i])
	}
	m.ClientOutcomeMs = lab(last.Sub(rec.start))
	byID := map[string]api.RequestEntry{}
	for _, e := range snap.Entries {
		byID[e.ID] = e
	}
	entries := make([]api.RequestEntry, n)
	durs := make([]time.Duration, n) // real time
	for i := range n {
		e, ok := byID[requestID(seed, i)]
		if !ok || e.Started == nil || e.Finished == nil {
			return t, fmt.Errorf("replay: request %d of workload %d is not in the server's log as served", i, seed)
		}
		entries[i], durs[i] = e, time.Duration(float64(w.Durations[i])*scale)
	}
	late := lateness(rec.issue, entries, durs)
	waits := make([]float64, 0, n)
	var drain time.Time
	var after, overhead time.Duration
	for i, e := range entries {
		// The model's queue wait runs from issue to start.
		waits = append(waits, lab(e.Started.Sub(rec.issue[i])))
		// The request's own delay from issue to admission (the network,
		// and waiting for its turn in issue order).
		lag := max(e.Arrived.Sub(rec.issue[i]), 0)
		t.AdmissionLagMs = max(t.AdmissionLagMs, float64(lag)/float64(time.Millisecond))
		// The deadline came within NearTie of the server's finish, or
		// between the finish and where the model puts it (late[i] earlier):
		// which came first is up to timers, not the workload.
		deadline := rec.issue[i].Add(rec.timeout)
		if gap := e.Finished.Sub(deadline); gap > -NearTie && gap < NearTie+late[i] {
			t.NearTies++
		}
		drain = later(drain, *e.Finished)
		if !rec.done[i] {
			after += max(e.Finished.Sub(later(deadline, *e.Started)), 0)
		} else {
			overhead += lag + max(rec.outcome[i].Sub(*e.Finished), 0)
		}
	}
	slices.Sort(waits)
	m.P95QueueWaitMs = nearestRank(waits, 0.95)
	m.MaxQueueWaitMs = waits[n-1]
	m.ServerDrainMs = lab(drain.Sub(rec.start))
	m.WorkAfterTimeoutMs = lab(after)
	if m.Completed > 0 {
		t.CallOverheadMs = float64(overhead) / float64(time.Millisecond) / m.Completed
	}
	if links := chainLinks(rec, byID, seed, limit); len(links) > 0 {
		t.CallOverheadMs, t.ChainOverheadMs = chainOverhead(links, (n+limit-1)/limit)
	}
	return t, nil
}

// nearestRank is the p-quantile (0 < p ≤ 1) of sorted xs by the
// nearest-rank method, as the model takes it: the value at rank
// ceil(p·n).
func nearestRank(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
