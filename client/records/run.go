// Package records processes batches of records against the mock
// dependencies the way the lab's client does: each record makes three
// enrichment calls in sequence, then one write to the system of record,
// under a Strategy that bounds records in flight and guards calls with
// per-dependency budgets. Every record ends in exactly one terminal State.
package records

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/mockservice/api"
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

// Dependency names, as in metrics: the mock service's station names.
const (
	Enrichment = api.Enrichment
	Records    = api.Records
)

// Defaults of a Config.
const (
	DefaultRecords       = 200
	DefaultCallTimeout   = budgets.DefaultCallTimeout // the lab's 2 s
	DefaultPermitTimeout = budgets.DefaultPermitTimeout
	EnrichmentSteps      = 3
	// healthTimeout bounds the health check before the first record.
	healthTimeout = 5 * time.Second
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

// DefaultConfig is a 200-record C4 run against the mock service's default
// address.
func DefaultConfig() Config {
	s, _ := ParseStrategy("C4")
	return Config{Target: "http://" + api.DefaultAddress, Records: DefaultRecords, Strategy: s,
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
	}
	if err := api.CheckTimeScale(c.TimeScale); err != nil {
		return fmt.Errorf("time_scale: %w", err)
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

func (c Config) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.TimeScale)
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
	Server              *api.Stats                       `json:"server,omitempty"`
	Timeline            []Sample                         `json:"timeline,omitempty"`
	cpulimit.Runtime
}

// ErrUnreachable means the target did not answer its health check; no
// record was sent.
var ErrUnreachable = errors.New("records: target unreachable")

// Run processes cfg.Records records against cfg.Target and returns the
// result. It checks the target's /healthz first (ErrUnreachable). A target
// that fails mid-run does not stop the run: every record still ends in a
// terminal state, and the failed calls are counted as errors.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, fmt.Errorf("records: %w", err)
	}
	inFlight := cfg.inFlight()
	r := &runner{cfg: cfg, http: transport.New(inFlight)}
	defer r.http.CloseIdleConnections()
	mock := api.Client{BaseURL: cfg.Target, HTTP: r.http, Timeout: healthTimeout}
	if err := mock.Healthy(ctx); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	metrics := budgets.NewMetrics(cfg.Registerer)
	metrics.Register(Enrichment)
	metrics.Register(Records)
	var err error
	if r.enrich, r.writes, err = buildBudgets(cfg, metrics); err != nil {
		return Result{}, fmt.Errorf("records: %w", err)
	}

	states := make([]State, cfg.Records)
	var mu sync.Mutex
	active, peak := 0, 0
	start := time.Now()
	stopSampling := sample(cfg, start, metrics, func() int { mu.Lock(); defer mu.Unlock(); return active })
	var g errgroup.Group // no error ends the batch: every record runs to its state
	g.SetLimit(inFlight)
	for i := range cfg.Records {
		g.Go(func() error {
			mu.Lock()
			active++
			peak = max(peak, active)
			mu.Unlock()
			states[i] = r.process(ctx, i)
			mu.Lock()
			active--
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	elapsed := time.Since(start)
	timeline := stopSampling()

	res := Result{Strategy: cfg.Strategy.Name, Params: cfg.Strategy, Records: cfg.Records,
		DurationSeconds: elapsed.Seconds(), RecordsInFlight: inFlight, PeakRecordsInFlight: peak,
		PeakInFlight: map[string]int{}, Calls: map[string]map[budgets.Class]int{},
		TimeScale: cfg.TimeScale, Runtime: cpulimit.ReadRuntime(), Timeline: timeline}
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
		return res, fmt.Errorf("records: states add up to %d, not %d", res.Complete+res.Incomplete+res.WriteRejected+res.Failed, cfg.Records)
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
	if st, err := (api.Client{BaseURL: cfg.Target, HTTP: r.http}).Scrape(context.WithoutCancel(ctx)); err == nil {
		res.Server = &st
		w := st.Stations[Records].HighWater.Offered
		res.PeakConcurrentWrite = &w
	}
	return res, nil
}

// sample records calls and records in flight every cfg.SampleInterval until
// the returned stop is called; stop returns the samples. With no interval
// it records nothing.
func sample(cfg Config, start time.Time, m *budgets.Metrics, records func() int) (stop func() []Sample) {
	if cfg.SampleInterval <= 0 {
		return func() []Sample { return nil }
	}
	var timeline []Sample
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(cfg.SampleInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				timeline = append(timeline, Sample{T: now.Sub(start).Seconds() / cfg.TimeScale,
					Enrichment: m.InFlight(Enrichment), Records: m.InFlight(Records), InFlight: records()})
			}
		}
	}()
	return func() []Sample {
		close(done)
		<-sampled
		return timeline
	}
}
