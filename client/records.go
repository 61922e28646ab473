// Package client processes batches of records against the mock dependencies
// the way the lab's client does: each record makes three enrichment calls in
// sequence, then one write to the system of record, under a Strategy that
// bounds records in flight and guards calls with per-dependency budgets.
// Every record ends in exactly one terminal State.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/mockservice"
)

// State is a record's terminal state.
type State string

const (
	// Complete: all three enrichments succeeded and the write was accepted.
	Complete State = "complete"
	// Incomplete: an enrichment failed or timed out; the record was still
	// written, with complete: false, and the write was accepted.
	Incomplete State = "incomplete"
	// WriteRejected: the system of record refused the write (503/429).
	WriteRejected State = "write_rejected"
	// Failed: the write timed out, had no permit in time, or failed.
	Failed State = "failed"
)

// States lists every State in a stable order.
var States = []State{Complete, Incomplete, WriteRejected, Failed}

// Dependency names, as in metrics.
const (
	Enrichment = mockservice.Enrichment
	Records    = mockservice.Records
)

// Defaults of a Config.
const (
	DefaultRecords       = 200
	DefaultCallTimeout   = budgets.DefaultCallTimeout // the lab's 2 s
	DefaultPermitTimeout = budgets.DefaultPermitTimeout
	EnrichmentSteps      = 3
)

// Config is one run.
type Config struct {
	// Target is the mock service's base URL, e.g. http://127.0.0.1:8080.
	Target   string
	Records  int
	Strategy Strategy
	// CallTimeout and PermitTimeout are before the time scale.
	CallTimeout, PermitTimeout time.Duration
	// TimeScale multiplies every client-side duration (1: real time); give
	// the mock service the same factor.
	TimeScale float64
	// RunID prefixes record ids so that runs do not collide in the store.
	RunID string
	// Registerer receives the run's budget metrics (nil: none).
	Registerer prometheus.Registerer
	// SampleInterval, when > 0, samples calls and records in flight that
	// often (real time) into Result.Timeline.
	SampleInterval time.Duration
}

// Sample is the client's in-flight state at one moment of a run.
type Sample struct {
	// T is lab seconds since the run started (real seconds / time scale).
	T          float64 `json:"t"`
	Enrichment int     `json:"enrichment"`
	Records    int     `json:"records"`
	InFlight   int     `json:"records_in_flight"`
}

// DefaultConfig is a 200-record C4 run against 127.0.0.1:8080.
func DefaultConfig() Config {
	s, _ := ParseStrategy("C4")
	return Config{Target: "http://" + mockservice.DefaultListen, Records: DefaultRecords, Strategy: s,
		CallTimeout: DefaultCallTimeout, PermitTimeout: DefaultPermitTimeout, TimeScale: 1}
}

// Validate names the first bad field.
func (c Config) Validate() error {
	switch {
	case c.Target == "":
		return errors.New("target: missing")
	case c.Records < 1:
		return fmt.Errorf("records: %d must be ≥ 1", c.Records)
	case c.CallTimeout <= 0:
		return fmt.Errorf("call_timeout: %v must be > 0", c.CallTimeout)
	case c.PermitTimeout <= 0:
		return fmt.Errorf("permit_timeout: %v must be > 0", c.PermitTimeout)
	case !(c.TimeScale > 0) || c.TimeScale > 1000:
		return fmt.Errorf("time_scale: %v must be in (0, 1000]", c.TimeScale)
	}
	if err := c.Strategy.Validate(); err != nil {
		return fmt.Errorf("strategy %s: %w", c.Strategy.Name, err)
	}
	return nil
}

// inFlight resolves the strategy's records in flight for this run.
func (c Config) inFlight() int {
	switch n := c.Strategy.RecordsInFlight; n {
	case RuntimeDefaultInFlight:
		return runtime.GOMAXPROCS(0)
	case UnboundedInFlight:
		return c.Records
	default:
		return min(n, c.Records)
	}
}

// Result is one run's outcome. Complete+Incomplete+WriteRejected+Failed is
// always Records.
type Result struct {
	Strategy            string                           `json:"strategy"`
	Params              Strategy                         `json:"strategy_params"`
	Records             int                              `json:"records"`
	Complete            int                              `json:"complete"`
	Incomplete          int                              `json:"incomplete"`
	WriteRejected       int                              `json:"write_rejected"`
	Failed              int                              `json:"failed"`
	DurationSeconds     float64                          `json:"duration_seconds"`
	AcceptedPerSecond   float64                          `json:"accepted_per_second"`
	WriteRejections     int                              `json:"write_rejections"`
	PeakConcurrentWrite *int                             `json:"peak_concurrent_writes"`
	PeakInFlight        map[string]int                   `json:"peak_in_flight"`
	RecordsInFlight     int                              `json:"records_in_flight"`
	PeakRecordsInFlight int                              `json:"peak_records_in_flight"`
	Calls               map[string]map[budgets.Class]int `json:"calls"`
	PermitTimeouts      int                              `json:"permit_timeouts"`
	CallTimeouts        int                              `json:"call_timeouts"`
	Errors              int                              `json:"errors"`
	TimeScale           float64                          `json:"time_scale"`
	Server              *mockservice.Stats               `json:"server,omitempty"`
	Timeline            []Sample                         `json:"timeline,omitempty"`
	Runtime
}

// ErrUnreachable means the target did not answer its health check; no
// record was sent.
var ErrUnreachable = errors.New("client: target unreachable")

// NewHTTPClient returns a client whose transport keeps enough idle
// connections per host for inFlight concurrent calls. Go's default keeps
// two, so a strategy's concurrency would churn through new connections;
// nothing here caps connections per host.
func NewHTTPClient(inFlight int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        inFlight + 16,
		MaxIdleConnsPerHost: inFlight + 16,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
	}}
}

type runner struct {
	cfg            Config
	http           *http.Client
	enrich, writes *budgets.Budget
}

// Run processes cfg.Records records against cfg.Target and returns the
// result. It checks the target's /healthz first (ErrUnreachable). A target
// that fails mid-run does not stop the run: every record still ends in a
// terminal state, and the failed calls are counted as errors.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, fmt.Errorf("client: %w", err)
	}
	inFlight := cfg.inFlight()
	r := &runner{cfg: cfg, http: NewHTTPClient(inFlight)}
	defer r.http.CloseIdleConnections()
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := mockservice.Admin{BaseURL: cfg.Target, HTTP: r.http}.Healthy(hctx)
	cancel()
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	metrics, err := budgets.NewMetrics(cfg.Registerer)
	if err != nil {
		return Result{}, fmt.Errorf("client: metrics: %w", err)
	}
	metrics.Register(Enrichment)
	metrics.Register(Records)
	if r.enrich, r.writes, err = buildBudgets(cfg, metrics); err != nil {
		return Result{}, fmt.Errorf("client: %w", err)
	}

	states := make([]State, cfg.Records)
	var mu sync.Mutex
	active, peak := 0, 0
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	var timeline []Sample
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		if cfg.SampleInterval <= 0 {
			return
		}
		tick := time.NewTicker(cfg.SampleInterval)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case now := <-tick.C:
				mu.Lock()
				recs := active
				mu.Unlock()
				timeline = append(timeline, Sample{T: now.Sub(start).Seconds() / cfg.TimeScale,
					Enrichment: metrics.InFlight(Enrichment), Records: metrics.InFlight(Records), InFlight: recs})
			}
		}
	}()
	for range inFlight {
		wg.Go(func() {
			for i := range next {
				mu.Lock()
				active++
				peak = max(peak, active)
				mu.Unlock()
				states[i] = r.process(ctx, i)
				mu.Lock()
				active--
				mu.Unlock()
			}
		})
	}
	for i := range cfg.Records {
		next <- i
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	close(stopSampling)
	<-sampled

	res := Result{Strategy: cfg.Strategy.Name, Params: cfg.Strategy, Records: cfg.Records,
		DurationSeconds: elapsed.Seconds(), RecordsInFlight: inFlight, PeakRecordsInFlight: peak,
		PeakInFlight: map[string]int{}, Calls: map[string]map[budgets.Class]int{},
		TimeScale: cfg.TimeScale, Runtime: ReadRuntime(), Timeline: timeline}
	for _, s := range states {
		switch s {
		case Complete:
			res.Complete++
		case Incomplete:
			res.Incomplete++
		case WriteRejected:
			res.WriteRejected++
		case Failed:
			res.Failed++
		}
	}
	if res.Complete+res.Incomplete+res.WriteRejected+res.Failed != cfg.Records {
		return res, fmt.Errorf("client: record states add up to %d, not %d", res.Complete+res.Incomplete+res.WriteRejected+res.Failed, cfg.Records)
	}
	for dep, st := range metrics.Snapshot() {
		res.PeakInFlight[dep] = st.PeakInFlight
		res.Calls[dep] = st.Calls
		res.PermitTimeouts += st.Calls[budgets.PermitTimeout]
		res.CallTimeouts += st.Calls[budgets.CallTimeout]
		res.Errors += st.Calls[budgets.Error]
	}
	res.WriteRejections = res.Calls[Records][budgets.Rejected]
	res.AcceptedPerSecond = float64(res.Complete+res.Incomplete) / elapsed.Seconds()
	// The server's own view, when the target is a loadlab mock service.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if st, err := mockservice.Scrape(sctx, r.http, cfg.Target); err == nil {
		res.Server = &st
		w := st.Stations[Records].HighWater.Offered
		res.PeakConcurrentWrite = &w
	}
	return res, nil
}

func (c Config) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.TimeScale)
}

// buildBudgets returns the budgets for enrichment and writes; for a shared
// strategy they are the same budget.
func buildBudgets(cfg Config, m *budgets.Metrics) (enrich, writes *budgets.Budget, err error) {
	s := cfg.Strategy
	call, permit := cfg.scaled(cfg.CallTimeout), cfg.scaled(cfg.PermitTimeout)
	one := func(name string, limit int, rate float64) (*budgets.Budget, error) {
		if limit == 0 && rate == 0 {
			return budgets.Unlimited(name, call, m)
		}
		if limit == 0 {
			limit = int(^uint32(0) >> 1) // rate only: permits never bind
		}
		return budgets.New(name, budgets.Config{Limit: limit, Rate: rate / cfg.TimeScale, Burst: 1,
			PermitTimeout: permit, CallTimeout: call}, m)
	}
	if s.SharedPermits > 0 {
		shared, err := budgets.New("shared", budgets.Config{Limit: s.SharedPermits, PermitTimeout: permit, CallTimeout: call}, m)
		return shared, shared, err
	}
	if enrich, err = one(Enrichment, s.EnrichPermits, s.EnrichRate); err != nil {
		return nil, nil, err
	}
	writes, err = one(Records, s.WritePermits, s.WriteRate)
	return enrich, writes, err
}

// process runs one record to its terminal state. Enrichment stops at the
// first call that does not succeed; the record is then written incomplete.
func (r *runner) process(ctx context.Context, i int) State {
	id := fmt.Sprintf("%s%05d", r.cfg.RunID, i)
	complete := true
	for step := 1; step <= EnrichmentSteps; step++ {
		body, _ := json.Marshal(map[string]any{"record_id": id, "step": step})
		if res := r.enrich.Do(ctx, Enrichment, r.post("/enrich", body)); res.Class != budgets.OK {
			complete = false
			break
		}
	}
	body, _ := json.Marshal(map[string]any{"id": id, "complete": complete})
	res := r.writes.Do(ctx, Records, r.post("/records", body))
	switch {
	case res.Class == budgets.OK && complete:
		return Complete
	case res.Class == budgets.OK:
		return Incomplete
	case res.Class == budgets.Rejected:
		return WriteRejected
	default:
		return Failed
	}
}

// post returns a call that POSTs body and reads the whole answer within the
// call's context.
func (r *runner) post(path string, body []byte) budgets.Call {
	return func(ctx context.Context) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.cfg.Target+path, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := r.http.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return 0, err
		}
		return resp.StatusCode, nil
	}
}
