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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/experiments/pipelines"
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
	// StepRejected: a required step before the write (in a pipeline of
	// one's own) was refused (a rejection status); nothing was written.
	StepRejected State = "step_rejected"
	// Failed: the write was not accepted and the client knows it: it was
	// never sent (no permit or rate token in time) or was answered with
	// another status.
	Failed State = "failed"
	// WriteUnknown: the write was sent and no answer came (call timeout,
	// transport error, or the run was interrupted): whether the system of
	// record stored it is unknown to the client. Its record id is listed
	// in Result.UnknownWrites, to be resolved against the system of record.
	WriteUnknown State = "write_unknown"
	// Interrupted: the run was interrupted while the record was in
	// progress, before its write was sent: nothing was written.
	Interrupted State = "interrupted"
	// NotStarted: the run was interrupted before the record began.
	NotStarted State = "not_started"
)

// States lists every State in a stable order.
var States = []State{Complete, Incomplete, WriteRejected, StepRejected, Failed, WriteUnknown, Interrupted, NotStarted}

// Dependency names, as in metrics: the mock service's station names.
const (
	Enrichment = api.Enrichment
	Records    = api.Records
)

// Defaults of a Config.
const (
	DefaultRecords = 200
	// MaxRecords bounds a batch: the run keeps a state per record.
	MaxRecords = 1_000_000
	// MaxUnknownListed bounds Result.UnknownWrites; beyond it the ids are
	// counted, not listed.
	MaxUnknownListed     = 10_000
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
	// Profile, when set, switches the mock service to this latency profile
	// first; Reset clears its counters first, so its high-water marks are
	// this run's. Both need a loadlab mock service: Profile on another
	// target is ErrNotMock, Reset is then skipped. AdminToken is the mock's
	// admin token, if it has one.
	Profile    string
	Reset      bool
	AdminToken string
	// Wait is how long to keep asking a target that does not accept
	// connections yet (a mock service still starting); 0 asks once.
	Wait time.Duration
	// Pipeline is what one record does; nil: the lab's
	// (experiments/pipelines/lab.yaml).
	Pipeline *pipeline.Pipeline
	// CallURLs, when set, sends a dependency's calls to another base URL
	// (a fault proxy in front of it, say); identification, admin and
	// metrics requests still go to Target.
	CallURLs map[string]string
}

// Sample is the client's in-flight state at one moment of a run.
type Sample struct {
	// T is lab seconds since the run started (real seconds / time scale).
	T          float64 `json:"t"`
	Enrichment int     `json:"enrichment"`
	Records    int     `json:"records"`
	InFlight   int     `json:"records_in_flight"`
	// Calls is the calls in flight to a pipeline's other dependencies.
	Calls map[string]int `json:"calls_in_flight,omitempty"`
}

// DefaultConfig is a 200-record C4 run against the mock service's default
// address.
func DefaultConfig() Config {
	s, _ := ParseStrategy("C4")
	return Config{Target: "http://" + api.DefaultAddress, Records: DefaultRecords, Strategy: s,
		CallTimeout: DefaultCallTimeout, PermitTimeout: DefaultPermitTimeout, TimeScale: 1}
}

// Validate names the first bad field, by its flag in loadlab run.
func (c Config) Validate() error {
	switch {
	case c.Target == "":
		return errors.New("target: missing")
	case c.Records < 1 || c.Records > MaxRecords:
		return fmt.Errorf("records: %d must be in [1, %d]", c.Records, MaxRecords)
	case c.CallTimeout <= 0:
		return fmt.Errorf("call-timeout: %v must be > 0", c.CallTimeout)
	case c.PermitTimeout <= 0:
		return fmt.Errorf("permit-timeout: %v must be > 0", c.PermitTimeout)
	case strings.Trim(c.RunID, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~:-") != "":
		// Record ids go into paths and bodies unescaped: keep them URL-safe.
		return fmt.Errorf("run-id: %q may hold only letters, digits and . _ ~ : -", c.RunID)
	}
	if err := api.CheckTimeScale(c.TimeScale); err != nil {
		return fmt.Errorf("time-scale: %w", err)
	}
	if err := c.Strategy.Validate(); err != nil {
		return fmt.Errorf("strategy %s: %w", c.Strategy.Name, err)
	}
	if err := c.Strategy.Fits(c.PipelineOrLab()); err != nil {
		return fmt.Errorf("strategy %s: %w", c.Strategy.Name, err)
	}
	return nil
}

// PipelineOrLab is the run's pipeline: the lab's unless one was given.
func (c Config) PipelineOrLab() *pipeline.Pipeline {
	if c.Pipeline == nil {
		return pipelines.Lab()
	}
	return c.Pipeline
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

// Result is one run's outcome. Complete + Incomplete + WriteRejected +
// StepRejected + Failed + WriteUnknown + Interrupted + NotStarted is
// always Records.
type Result struct {
	Strategy      string   `json:"strategy"`
	Params        Strategy `json:"strategy_params"`
	Records       int      `json:"records"`
	Complete      int      `json:"complete"`
	Incomplete    int      `json:"incomplete"`
	WriteRejected int      `json:"write_rejected"`
	StepRejected  int      `json:"step_rejected,omitempty"`
	Failed        int      `json:"failed"`
	WriteUnknown  int      `json:"write_unknown"`
	Interrupted   int      `json:"interrupted"`
	NotStarted    int      `json:"not_started"`
	// UnknownWrites lists the record ids whose write outcome the client
	// does not know (at most MaxUnknownListed; WriteUnknown counts them all).
	UnknownWrites   []string `json:"unknown_writes,omitempty"`
	DurationSeconds float64  `json:"duration_seconds"`
	// Records whose write the system of record accepted, per real second
	// and per lab second (real seconds / time scale) of the run.
	AcceptedPerRealSecond float64 `json:"accepted_per_real_second"`
	AcceptedPerLabSecond  float64 `json:"accepted_per_lab_second"`
	// LegacyAcceptedPerSecond reads results written before the two units
	// had names of their own: "accepted_per_second", per real second.
	LegacyAcceptedPerSecond float64                          `json:"accepted_per_second,omitempty"`
	WriteRejections         int                              `json:"write_rejections"`
	PeakConcurrentWrite     *int                             `json:"peak_concurrent_writes"`
	PeakInFlight            map[string]int                   `json:"peak_in_flight"`
	RecordsInFlight         int                              `json:"records_in_flight"`
	PeakRecordsInFlight     int                              `json:"peak_records_in_flight"`
	Calls                   map[string]map[budgets.Class]int `json:"calls"`
	// What reconciles with the server's count: calls whose request was
	// written in full, per dependency, and writes answered 201 (stored new)
	// and 200 (duplicate).
	CallsSent       map[string]int `json:"calls_sent"`
	WritesCreated   int            `json:"writes_created"`
	WritesDuplicate int            `json:"writes_duplicate"`
	// ErrorKinds counts the calls that ended in an error by dependency and
	// kind: "records: status 405", "lookup: connection refused".
	ErrorKinds     map[string]int `json:"error_kinds,omitempty"`
	PermitTimeouts int            `json:"permit_timeouts"`
	RateTimeouts   int            `json:"rate_timeouts"`
	CallTimeouts   int            `json:"call_timeouts"`
	Errors         int            `json:"errors"`
	TimeScale      float64        `json:"time_scale"`
	// ServerIdentified: the target identified itself as a loadlab mock
	// service, so its metrics were read; when false, every figure is the
	// client's own and no request but the records' calls was sent.
	ServerIdentified bool `json:"server_identified"`
	// Partial: the run was interrupted; records not begun are NotStarted.
	Partial  bool       `json:"partial"`
	Server   *api.Stats `json:"server,omitempty"`
	Timeline []Sample   `json:"timeline,omitempty"`
	cpulimit.Runtime
}

// Errors Run returns before any record is sent.
var (
	// ErrUnreachable: the target did not accept a connection, or did not
	// answer HTTP (it is api.ErrUnreachable).
	ErrUnreachable = api.ErrUnreachable
	// ErrTimeScaleMismatch: the target is a loadlab mock service running at
	// another time scale; every figure would be wrong.
	ErrTimeScaleMismatch = errors.New("records: time scale mismatch")
	// ErrNotMock: a profile was asked for, and the target is not a loadlab
	// mock service.
	ErrNotMock = errors.New("records: the target is not a loadlab mock service")
	// ErrAdmin: the mock service refused or failed an admin request
	// (profile switch or reset), for example for want of its token.
	ErrAdmin = errors.New("records: mock service admin")
)

// Run processes cfg.Records records against cfg.Target and returns the
// result. It first checks that the target accepts connections and asks it,
// with OPTIONS on the enrichment route, whether it is a loadlab mock
// service; only then does it read the service's metrics after the run
// (ErrUnreachable, ErrTimeScaleMismatch before anything is sent). A target
// that fails mid-run does not stop the run: every record still ends in a
// terminal state, and the failed calls are counted as errors. When ctx ends,
// records not yet begun are NotStarted and the result is Partial.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, fmt.Errorf("records: %w", err)
	}
	inFlight := cfg.inFlight()
	p := cfg.PipelineOrLab()
	r := &runner{cfg: cfg, pipeline: p, http: transport.New(inFlight), sent: map[string]*atomic.Int64{}}
	defer r.http.CloseIdleConnections()
	identity, err := identify(ctx, cfg, p, r.http)
	if err != nil {
		return Result{}, fmt.Errorf("records: %w", err)
	}
	if err := prepare(ctx, cfg, identity); err != nil {
		return Result{}, err
	}
	metrics := budgets.NewMetrics(cfg.Registerer)
	for _, d := range p.Dependencies {
		metrics.Register(d.Name)
		r.sent[d.Name] = new(atomic.Int64)
	}
	if r.budgets, err = buildBudgets(cfg, p, metrics); err != nil {
		return Result{}, fmt.Errorf("records: %w", err)
	}

	states := make([]State, cfg.Records)
	var mu sync.Mutex
	active, peak := 0, 0
	var unknown []string
	start := time.Now()
	stopSampling := sample(cfg, start, metrics, p.Names(), func() int { mu.Lock(); defer mu.Unlock(); return active })
	var g errgroup.Group // no error ends the batch: every record runs to its state
	g.SetLimit(inFlight)
	for i := range cfg.Records {
		if ctx.Err() != nil { // interrupted: the rest are not begun
			states[i] = NotStarted
			continue
		}
		g.Go(func() error {
			if ctx.Err() != nil { // interrupted while it waited for a slot
				states[i] = NotStarted
				return nil
			}
			mu.Lock()
			active++
			peak = max(peak, active)
			mu.Unlock()
			st, id := r.process(ctx, i)
			states[i] = st
			mu.Lock()
			active--
			if st == WriteUnknown && len(unknown) < MaxUnknownListed {
				unknown = append(unknown, id)
			}
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
		TimeScale: cfg.TimeScale, Runtime: cpulimit.ReadRuntime(), Timeline: timeline,
		ServerIdentified: identity != nil, Partial: ctx.Err() != nil, UnknownWrites: unknown}
	if res.UnknownWrites == nil {
		res.UnknownWrites = []string{}
	}
	for _, s := range states {
		switch s {
		case Complete:
			res.Complete++
		case Incomplete:
			res.Incomplete++
		case WriteRejected:
			res.WriteRejected++
		case StepRejected:
			res.StepRejected++
		case Failed:
			res.Failed++
		case WriteUnknown:
			res.WriteUnknown++
		case Interrupted:
			res.Interrupted++
		case NotStarted:
			res.NotStarted++
		}
	}
	for dep, st := range metrics.Snapshot() {
		res.PeakInFlight[dep] = st.PeakInFlight
		res.Calls[dep] = st.Calls
		res.PermitTimeouts += st.Calls[budgets.PermitTimeout]
		res.RateTimeouts += st.Calls[budgets.RateTimeout]
		res.CallTimeouts += st.Calls[budgets.CallTimeout]
		res.Errors += st.Calls[budgets.Error]
	}
	res.WriteRejections = res.Calls[p.Write()][budgets.Rejected]
	res.CallsSent = map[string]int{}
	for dep, n := range r.sent {
		res.CallsSent[dep] = int(n.Load())
	}
	res.WritesCreated, res.WritesDuplicate = int(r.created.Load()), int(r.duplicate.Load())
	res.ErrorKinds = r.kinds
	res.AcceptedPerRealSecond = float64(res.Complete+res.Incomplete) / elapsed.Seconds()
	res.AcceptedPerLabSecond = res.AcceptedPerRealSecond * cfg.TimeScale
	// The server's own view, only from a loadlab mock service.
	if identity != nil {
		if st, err := (api.Client{BaseURL: cfg.Target, HTTP: r.http}).Scrape(context.WithoutCancel(ctx)); err == nil {
			res.Server = &st
			if w, ok := st.Stations[p.Write()]; ok {
				res.PeakConcurrentWrite = &w.HighWater.Offered
			}
		}
	}
	return res, nil
}
