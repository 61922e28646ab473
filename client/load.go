package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/models"
)

// Arrival modes of the open generator.
const (
	// ArrivalsStep sends all of a second's arrivals at its start, as the
	// admission model does.
	ArrivalsStep = "step"
	// ArrivalsUniform spreads a second's arrivals evenly over it.
	ArrivalsUniform = "uniform"
)

// Outcomes of a load request. Every sent request ends in exactly one.
const (
	LoadOnTime     = "on_time"
	LoadRejected   = "rejected"
	LoadTooLate    = "too_late"
	LoadUnfinished = "unfinished"
	// LoadTimedOut: the client gave up and the server keeps no request log,
	// so whether it still did the work is unknown.
	LoadTimedOut = "timed_out"
)

// Defaults of a LoadConfig, in model seconds.
const (
	DefaultTieWindowStep = 0.1 // a tenth of a model second
	DefaultLateThreshold = 0.1
)

// Clock is the generator's time source. Tests drive the generator with a
// fake one; SleepUntil returns early with ctx's error.
type Clock interface {
	Now() time.Time
	SleepUntil(ctx context.Context, t time.Time) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RealClock is the wall clock.
var RealClock Clock = realClock{}

// LoadConfig is one load run: the admission scenario's generator and
// timeout (its workers, service time and queue describe the in-process
// endpoint only), the arrival mode and the time scale.
type LoadConfig struct {
	// Target is the URL each request is POSTed to.
	Target   string
	Scenario models.AdmissionScenario
	Arrivals string
	// TimeScale: one model second lasts TimeScale real seconds.
	TimeScale float64
	// MaxInFlight caps requests awaiting an outcome; an arrival that finds
	// the cap reached is dropped, and counted. 0: no cap.
	MaxInFlight int
	// LateThreshold (model seconds): an arrival sent later than this after
	// its scheduled time is counted as a late start.
	LateThreshold float64
	// TieWindow (model seconds): a reply arriving within this window after
	// the client's deadline counts as before the give-up — the model's
	// order for simultaneous events (completions, then give-ups).
	TieWindow  float64
	AdminToken string
	Registerer prometheus.Registerer
	Clock      Clock
	// Progress, when set, is called about every model second.
	Progress func(LoadProgress)
}

// LoadProgress is the state of a run in progress.
type LoadProgress struct {
	Elapsed, Duration float64 // model seconds
	Sent, Dropped     int
	Outcomes          map[string]int
}

// Validate names the first bad field.
func (c LoadConfig) Validate() error {
	if err := c.Scenario.Validate(); err != nil {
		return err
	}
	u, err := url.Parse(c.Target)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("target: %q is not an http(s) URL", c.Target)
	case c.Arrivals != ArrivalsStep && c.Arrivals != ArrivalsUniform:
		return fmt.Errorf("arrivals: %q is not step or uniform", c.Arrivals)
	case !(c.TimeScale > 0) || c.TimeScale > 1000:
		return fmt.Errorf("time-scale: %v must be in (0, 1000]", c.TimeScale)
	case c.MaxInFlight < 0:
		return fmt.Errorf("max-in-flight: %d must be ≥ 0", c.MaxInFlight)
	case c.LateThreshold < 0:
		return fmt.Errorf("late-threshold: %v must be ≥ 0", c.LateThreshold)
	case c.TieWindow < 0 || c.TieWindow >= 0.5:
		return fmt.Errorf("tie-window: %v must be in [0, 0.5) model seconds", c.TieWindow)
	}
	return nil
}

// LoadSecond is one model second of a real run.
type LoadSecond struct {
	T        int `json:"t"`
	Arrivals int `json:"arrivals"`
	Dropped  int `json:"dropped"`
	OnTime   int `json:"on_time"`
	Rejected int `json:"rejected"`
	TooLate  int `json:"too_late"`
	GaveUp   int `json:"gave_up"`
	// Queue is the station's queue length sampled in the middle of the
	// second; -1 when it could not be read.
	Queue int `json:"queue"`
}

// LoadResult has the admission model's keys, plus what only a real run has.
type LoadResult struct {
	Requests      int          `json:"requests"`
	OnTime        int          `json:"on_time"`
	Rejected      int          `json:"rejected"`
	TooLate       int          `json:"too_late"`
	Unfinished    int          `json:"unfinished"`
	P95LatencyS   *float64     `json:"p95_latency_s"`
	WastedWorkerS float64      `json:"wasted_worker_s"`
	PeakQueue     int          `json:"peak_queue"`
	QueueEmptyAtS *int         `json:"queue_empty_at_s"`
	QueueFullAtS  *int         `json:"queue_full_at_s"`
	TimedOut      int          `json:"timed_out"`
	Scheduled     int          `json:"scheduled"`
	Dropped       int          `json:"dropped"`
	LateStarts    int          `json:"late_starts"`
	MaxSendLagMs  float64      `json:"max_send_lag_ms"`
	Errors        int          `json:"errors"`
	ServerJoined  bool         `json:"server_joined"`
	TieWindowS    float64      `json:"tie_window_s"`
	TimeScale     float64      `json:"time_scale"`
	Timeline      []LoadSecond `json:"timeline"`
}

// loadRequest is the generator's own record of one request.
type loadRequest struct {
	id        string
	scheduled time.Time
	sent      time.Time
	outcome   string // client-side: on_time, rejected, gave_up, pending, error
	reply     time.Time
	deadline  time.Time
}

type loadRun struct {
	cfg     LoadConfig
	clock   Clock
	unit    time.Duration
	start   time.Time
	end     time.Time
	http    *http.Client
	metrics *loadMetrics

	mu       sync.Mutex
	reqs     []*loadRequest
	inFlight int
	dropped  []time.Duration // scheduled offsets of dropped arrivals
	late     int
	maxLag   time.Duration
	outcomes map[string]int
}

// ErrTargetUnreachable: the target did not answer before any load was sent.
var ErrTargetUnreachable = errors.New("client: load target unreachable")

// OpenArrivals returns the scheduled offsets of the open generator's
// arrivals over the scenario, in order.
func OpenArrivals(sc models.AdmissionScenario, mode string, unit time.Duration) []time.Duration {
	var out []time.Duration
	for t := 0; t < sc.Duration; t++ {
		n := sc.Rate(t)
		for j := range n {
			off := time.Duration(t) * unit
			if mode == ArrivalsUniform {
				off += time.Duration(j) * unit / time.Duration(n)
			}
			out = append(out, off)
		}
	}
	return out
}

// Load runs the generator against cfg.Target and joins the outcomes with
// the server's request log when the target has one.
func Load(ctx context.Context, cfg LoadConfig) (LoadResult, error) {
	if err := cfg.Validate(); err != nil {
		return LoadResult{}, fmt.Errorf("client: %w", err)
	}
	r := &loadRun{cfg: cfg, clock: cfg.Clock, outcomes: map[string]int{},
		unit: time.Duration(float64(time.Second) * cfg.TimeScale)}
	if r.clock == nil {
		r.clock = RealClock
	}
	var err error
	if r.metrics, err = newLoadMetrics(cfg.Registerer); err != nil {
		return LoadResult{}, fmt.Errorf("client: %w", err)
	}
	conns := cfg.MaxInFlight
	if conns == 0 {
		conns = 256
	}
	r.http = NewHTTPClient(conns)
	defer r.http.CloseIdleConnections()
	base := baseURL(cfg.Target)
	admin := mockservice.Admin{BaseURL: base, Token: cfg.AdminToken, HTTP: r.http}
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err = r.probe(hctx)
	cancel()
	if err != nil {
		return LoadResult{}, fmt.Errorf("%w: %v", ErrTargetUnreachable, err)
	}
	station := stationOf(cfg.Target)
	hasLog := admin.Reset(ctx) == nil && station != ""

	r.start = r.clock.Now().Add(r.unit / 10) // a moment to start the goroutines
	r.end = r.start.Add(time.Duration(cfg.Scenario.Duration) * r.unit)
	runCtx, stop := context.WithDeadline(ctx, r.end)
	defer stop()
	samples := make([]int, cfg.Scenario.Duration)
	for i := range samples {
		samples[i] = -1
	}
	var wg sync.WaitGroup
	if station != "" {
		wg.Go(func() { r.sampleQueue(runCtx, base, station, samples) })
	}
	if cfg.Progress != nil {
		wg.Go(func() { r.progress(runCtx) })
	}
	if cfg.Scenario.Generator == models.GeneratorOpen {
		r.runOpen(runCtx, &wg)
	} else {
		r.runClosed(runCtx, &wg)
	}
	wg.Wait()

	var snap *mockservice.RequestLogSnapshot
	var offset time.Duration
	if hasLog {
		t0 := time.Now()
		s, err := fetchRequestLog(context.Background(), r.http, base, cfg.AdminToken)
		t1 := time.Now()
		if err == nil {
			snap = &s
			offset = s.Now.Sub(t0.Add(t1.Sub(t0) / 2))
		}
	}
	return r.result(snap, offset, samples, station), nil
}

// probe checks that the target answers HTTP at all; any status will do.
func (r *loadRun) probe(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL(r.cfg.Target)+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func baseURL(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	return u.Scheme + "://" + u.Host
}

// stationOf names the mock station behind a target path, or "".
func stationOf(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return ""
	}
	switch u.Path {
	case "/enrich":
		return mockservice.Enrichment
	case "/records":
		return mockservice.Records
	}
	return ""
}

func (r *loadRun) runOpen(ctx context.Context, wg *sync.WaitGroup) {
	for i, off := range OpenArrivals(r.cfg.Scenario, r.cfg.Arrivals, r.unit) {
		sched := r.start.Add(off)
		if r.clock.SleepUntil(ctx, sched) != nil {
			return
		}
		req, ok := r.admit(i, sched)
		if !ok {
			continue
		}
		wg.Go(func() { r.send(ctx, req) })
	}
}

// runClosed runs the virtual users: user i first sends at second i mod 5,
// then waits for its outcome and thinks before sending again. In step mode
// the next send is at the start of the second it falls in.
func (r *loadRun) runClosed(ctx context.Context, wg *sync.WaitGroup) {
	sc := r.cfg.Scenario
	var mu sync.Mutex
	next := 0
	for u := range sc.Users {
		wg.Go(func() {
			at := r.start.Add(time.Duration(u%5) * r.unit)
			for at.Before(r.end) {
				if r.clock.SleepUntil(ctx, at) != nil {
					return
				}
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				req, ok := r.admit(i, at)
				var done time.Time
				if ok {
					r.send(ctx, req)
					r.mu.Lock()
					done = req.reply
					if req.outcome == "gave_up" {
						done = req.deadline
					}
					r.mu.Unlock()
				} else {
					done = at
				}
				if ctx.Err() != nil {
					return
				}
				at = done.Add(time.Duration(sc.Think) * r.unit)
				if r.cfg.Arrivals == ArrivalsStep {
					at = r.start.Add(at.Sub(r.start).Truncate(r.unit))
				}
			}
		})
	}
}

// admit decides whether an arrival is sent (and records its lag) or
// dropped because the in-flight cap is reached.
func (r *loadRun) admit(i int, sched time.Time) (*loadRequest, bool) {
	lag := r.clock.Now().Sub(sched)
	r.metrics.scheduled.Inc()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cfg.MaxInFlight > 0 && r.inFlight >= r.cfg.MaxInFlight {
		r.dropped = append(r.dropped, sched.Sub(r.start))
		r.metrics.dropped.Inc()
		return nil, false
	}
	r.inFlight++
	if lag > time.Duration(r.cfg.LateThreshold*float64(r.unit)) {
		r.late++
	}
	r.maxLag = max(r.maxLag, lag)
	r.metrics.sent.Inc()
	r.metrics.lag.Observe(lag.Seconds())
	req := &loadRequest{id: fmt.Sprintf("load-%06d", i), scheduled: sched, outcome: "pending",
		deadline: sched.Add(time.Duration(float64(r.cfg.Scenario.Timeout)*float64(r.unit) + r.cfg.TieWindow*float64(r.unit)))}
	r.reqs = append(r.reqs, req)
	return req, true
}

var loadBody = func(id string) []byte {
	b, _ := json.Marshal(map[string]any{"record_id": id, "step": 1, "id": id, "complete": true})
	return b
}

// send makes one request and records its client-side outcome.
func (r *loadRun) send(runCtx context.Context, req *loadRequest) {
	ctx, cancel := context.WithDeadline(runCtx, req.deadline)
	defer cancel()
	outcome := "error"
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, r.cfg.Target, bytes.NewReader(loadBody(req.id)))
	if err == nil {
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set(mockservice.HeaderRequestID, req.id)
		r.mu.Lock()
		req.sent = r.clock.Now()
		r.mu.Unlock()
		var resp *http.Response
		resp, err = r.http.Do(hreq)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			switch {
			case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
				outcome = LoadRejected
			case resp.StatusCode >= 200 && resp.StatusCode < 300:
				outcome = LoadOnTime
			}
		}
	}
	now := r.clock.Now()
	switch {
	case err != nil && runCtx.Err() != nil && now.Before(req.deadline):
		outcome = "pending" // the run ended first
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		outcome = "gave_up"
	}
	r.mu.Lock()
	req.outcome, req.reply = outcome, now
	r.inFlight--
	r.outcomes[outcome]++
	r.mu.Unlock()
	r.metrics.outcomes.WithLabelValues(outcome).Inc()
}

func (r *loadRun) sampleQueue(ctx context.Context, base, station string, samples []int) {
	for t := range samples {
		at := r.start.Add(time.Duration(t)*r.unit + r.unit/2)
		if r.clock.SleepUntil(ctx, at) != nil {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, r.unit/2)
		st, err := mockservice.Scrape(sctx, r.http, base)
		cancel()
		if err == nil {
			samples[t] = st.Stations[station].QueueLength
		}
	}
}

func (r *loadRun) progress(ctx context.Context) {
	for t := 1; ; t++ {
		if r.clock.SleepUntil(ctx, r.start.Add(time.Duration(t)*r.unit)) != nil {
			return
		}
		r.mu.Lock()
		p := LoadProgress{Elapsed: float64(t), Duration: float64(r.cfg.Scenario.Duration),
			Sent: len(r.reqs), Dropped: len(r.dropped), Outcomes: maps(r.outcomes)}
		r.mu.Unlock()
		r.cfg.Progress(p)
	}
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func fetchRequestLog(ctx context.Context, c *http.Client, base, token string) (mockservice.RequestLogSnapshot, error) {
	var snap mockservice.RequestLogSnapshot
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/admin/requests", nil)
	if err != nil {
		return snap, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return snap, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return snap, fmt.Errorf("request log: %s", resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&snap)
	return snap, err
}

// result joins the generator's records with the server's log. snap is nil
// for a target without one; offset is the server clock minus ours.
func (r *loadRun) result(snap *mockservice.RequestLogSnapshot, offset time.Duration, samples []int, station string) LoadResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := LoadResult{Requests: len(r.reqs), Dropped: len(r.dropped), Scheduled: len(r.reqs) + len(r.dropped),
		LateStarts: r.late, MaxSendLagMs: float64(r.maxLag) / float64(time.Millisecond),
		ServerJoined: snap != nil, TieWindowS: r.cfg.TieWindow, TimeScale: r.cfg.TimeScale}
	tl := make([]LoadSecond, r.cfg.Scenario.Duration)
	for t := range tl {
		tl[t] = LoadSecond{T: t, Queue: samples[t]}
	}
	second := func(at time.Time) int {
		return min(max(int(at.Sub(r.start)/r.unit), 0), len(tl)-1)
	}
	for _, off := range r.dropped {
		tl[second(r.start.Add(off))].Dropped++
	}
	server := map[string]mockservice.RequestEntry{}
	if snap != nil {
		for _, e := range snap.Entries {
			server[e.ID] = e
		}
	}
	serverEnd := r.end.Add(offset)
	var latencies []float64
	for _, q := range r.reqs {
		tl[second(q.scheduled)].Arrivals++
		switch q.outcome {
		case LoadOnTime:
			res.OnTime++
			tl[second(q.reply)].OnTime++
			latencies = append(latencies, float64(q.reply.Sub(q.scheduled))/float64(r.unit))
		case LoadRejected:
			res.Rejected++
			tl[second(q.reply)].Rejected++
		case "gave_up":
			tl[second(q.deadline)].GaveUp++
			e, ok := server[q.id]
			switch {
			case snap == nil:
				res.TimedOut++
			case ok && e.Finished != nil && e.Started != nil && e.Finished.Before(serverEnd):
				res.TooLate++
				tl[second(e.Finished.Add(-offset))].TooLate++
				res.WastedWorkerS += float64(e.Finished.Sub(*e.Started)) / float64(r.unit)
			default:
				res.Unfinished++
			}
		case "error":
			res.Errors++
			res.Unfinished++
		default: // pending at the end
			res.Unfinished++
		}
	}
	if len(latencies) > 0 {
		slices.Sort(latencies)
		p := models.NearestRank(latencies, 0.95)
		res.P95LatencyS = &p
	}
	capacity := -1
	if station == mockservice.Enrichment || station == mockservice.Records {
		capacity = r.queueCapacity(station)
	}
	last := -1
	for _, s := range tl {
		res.PeakQueue = max(res.PeakQueue, s.Queue)
		if s.Queue > 0 {
			last = s.T
		}
		if capacity > 0 && s.Queue == capacity && res.QueueFullAtS == nil {
			res.QueueFullAtS = ptr(s.T)
		}
	}
	if last >= 0 {
		res.QueueEmptyAtS = ptr(last + 1)
	}
	res.Timeline = tl
	return res
}

func (r *loadRun) queueCapacity(station string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := mockservice.Scrape(ctx, r.http, baseURL(r.cfg.Target))
	if err != nil {
		return -1
	}
	return st.Stations[station].QueueCapacity
}

func ptr[T any](v T) *T { return &v }

type loadMetrics struct {
	scheduled, sent, dropped prometheus.Counter
	outcomes                 *prometheus.CounterVec
	lag                      prometheus.Histogram
}

func newLoadMetrics(reg prometheus.Registerer) (*loadMetrics, error) {
	const ns = "loadlab_load"
	m := &loadMetrics{
		scheduled: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "scheduled_total",
			Help: "Arrivals the schedule called for."}),
		sent: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "sent_total",
			Help: "Arrivals sent."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "dropped_total",
			Help: "Arrivals not sent because the generator's in-flight cap was reached."}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "client_outcomes_total",
			Help: "Client-side outcomes: on_time, rejected, gave_up, pending (run ended first), error."}, []string{"outcome"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "send_lag_seconds",
			Help: "How late arrivals were sent after their scheduled time.", Buckets: prometheus.ExponentialBucketsRange(1e-5, 10, 25)}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.scheduled, m.sent, m.dropped, m.outcomes, m.lag} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
