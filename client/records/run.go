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
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/field"
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
	// MaxRecords bounds a batch, and the records of a time-bounded run.
	MaxRecords = 1_000_000
	// MaxUnknownListed bounds Result.UnknownWrites; beyond it the ids are
	// counted, not listed.
	MaxUnknownListed     = 10_000
	DefaultCallTimeout   = budgets.DefaultCallTimeout // the lab's 2 s
	DefaultPermitTimeout = budgets.DefaultPermitTimeout
	EnrichmentSteps      = 3
)

// Config is one run. Its JSON (durations in nanoseconds; the process's
// own hooks, Registerer, Dial and Stop, left out) is how the experiment
// runner hands a child process its run.
type Config struct {
	// Target is the mock service's base URL, e.g. http://127.0.0.1:8080.
	Target   string            `json:"target"`
	Records  int               `json:"records"`
	Strategy strategy.Strategy `json:"strategy"`
	// CallTimeout and PermitTimeout are before the time scale.
	CallTimeout   time.Duration `json:"call_timeout"`
	PermitTimeout time.Duration `json:"permit_timeout"`
	// TimeScale multiplies every client-side duration (1: real time); give
	// the mock service the same factor.
	TimeScale float64 `json:"time_scale"`
	// RunID prefixes record ids so that runs do not collide in the store;
	// empty: the run's start time (e.g. 20261202T041500.123-).
	RunID string `json:"run_id,omitempty"`
	// Registerer receives the run's budget metrics (nil: none).
	Registerer prometheus.Registerer `json:"-"`
	// SampleInterval, when > 0, samples calls and records in flight that
	// often (real time) into Result.Timeline.
	SampleInterval time.Duration `json:"sample_interval,omitempty"`
	// Profile, when set, switches the mock service to this latency profile
	// first; Reset clears its counters first, so its high-water marks are
	// this run's. Both need a loadlab mock service: Profile on another
	// target is ErrNotMock, Reset is then skipped. AdminToken is the mock's
	// admin token, if it has one.
	Profile    string `json:"profile,omitempty"`
	Reset      bool   `json:"reset"`
	AdminToken string `json:"admin_token,omitempty"`
	// Wait is how long to keep asking a target that does not accept
	// connections yet (a mock service still starting); 0 asks once.
	Wait time.Duration `json:"wait,omitempty"`
	// Pipeline is what one record does; nil: the lab's
	// (client/pipeline/lab.yaml).
	Pipeline *pipeline.Pipeline `json:"pipeline,omitempty"`
	// CallURLs, when set, sends a dependency's calls to another base URL
	// (a fault proxy in front of it, say); identification, admin and
	// metrics requests still go to Target.
	CallURLs map[string]string `json:"call_urls,omitempty"`
	// Duration, when > 0, bounds the run in time (lab time, before the time
	// scale): records keep coming, as slots free, until Duration has passed
	// since the run's clock started; then no record begins, and those in
	// progress finish. Records stays a cap (a run ends at whichever comes
	// first).
	Duration time.Duration `json:"duration,omitempty"`
	// Phases divide a time-bounded run for per-phase figures: each a name
	// and a duration in lab time. Their durations must add up to Duration
	// (when Duration is 0, Phases set it to their sum).
	Phases []Phase `json:"phases,omitempty"`
	// StartAt, when not zero, is when the run's clock starts (after
	// identification, profile and reset): the run waits for it, so that
	// another process (the experiment runner, which changes the mock
	// service's settings at phase boundaries) shares the run's time origin.
	// A StartAt already past starts at once; Result.StartLateSeconds says
	// by how much.
	StartAt time.Time `json:"start_at,omitzero"`
	// Dial, when set, opens every connection of the run instead of the
	// system's dialer: an in-memory wire, in tests on a fake clock.
	Dial transport.Dialer `json:"-"`
	// Stop, once closed, begins no more records: those in progress finish
	// within their deadlines (a drain), and the result is partial, the
	// records never begun not_started. Cancelling Run's context instead
	// ends the calls in flight too.
	Stop <-chan struct{} `json:"-"`
}

// DefaultConfig is a 200-record C4 run against the mock service's default
// address.
func DefaultConfig() Config {
	s, _ := strategy.Parse("C4")
	return Config{Target: "http://" + api.DefaultAddress, Records: DefaultRecords, Strategy: s,
		CallTimeout: DefaultCallTimeout, PermitTimeout: DefaultPermitTimeout, TimeScale: 1}
}

// Validate names the first bad field (a *field.Error: "records",
// "strategy.permits.geo", …).
func (c Config) Validate() error {
	switch {
	case c.Target == "":
		return field.Errorf("target", "missing")
	case c.Records < 1 || c.Records > MaxRecords:
		return field.Errorf("records", "%d must be in [1, %d]", c.Records, MaxRecords)
	case c.CallTimeout <= 0:
		return field.Errorf("call_timeout", "%v must be > 0", c.CallTimeout)
	case c.PermitTimeout <= 0:
		return field.Errorf("permit_timeout", "%v must be > 0", c.PermitTimeout)
	case strings.Trim(c.RunID, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~:-") != "":
		// Record ids go into paths and bodies unescaped: keep them URL-safe.
		return field.Errorf("run_id", "%q may hold only letters, digits and . _ ~ : -", c.RunID)
	}
	if err := c.validateTime(); err != nil {
		return err
	}
	if err := api.CheckTimeScale(c.TimeScale); err != nil {
		return field.Errorf("time_scale", "%w", err)
	}
	if err := c.Strategy.Validate(); err != nil {
		return c.strategyError(err)
	}
	if err := c.Strategy.Fits(c.PipelineOrLab()); err != nil {
		return c.strategyError(err)
	}
	return nil
}

// strategyError is a problem of the run's strategy, within the field
// "strategy" and saying which strategy it is.
func (c Config) strategyError(err error) error {
	if fe, ok := field.Of(err); ok {
		err = &field.Error{Field: fe.Field, Err: fmt.Errorf("%w (strategy %s)", fe.Err, c.Strategy.Name)}
	}
	return field.Within("strategy", err)
}

// CallBases is where each dependency of the run's pipeline is sent its
// calls, by name: its CallURLs entry, else its own base_url, else Target
// (a fault proxy goes in front of it).
func (c Config) CallBases() map[string]string {
	out := map[string]string{}
	for _, d := range c.PipelineOrLab().Dependencies {
		out[d.Name] = c.callBase(d)
	}
	return out
}

// callBase is the base URL of dep's calls.
func (c Config) callBase(dep pipeline.Dependency) string {
	if u, ok := c.CallURLs[dep.Name]; ok {
		return u
	}
	if dep.BaseURL != "" {
		return dep.BaseURL
	}
	return c.Target
}

// resolved is c with its defaults filled in: a time-bounded run's
// duration from its phases, the record ids' prefix from the time.
func (c Config) resolved() Config {
	c = c.timeBound()
	if c.RunID == "" {
		c.RunID = time.Now().UTC().Format("20060102T150405.000-")
	}
	return c
}

// PipelineOrLab is the run's pipeline: the lab's unless one was given.
func (c Config) PipelineOrLab() *pipeline.Pipeline {
	if c.Pipeline == nil {
		return pipeline.Lab()
	}
	return c.Pipeline
}

// inFlight resolves the strategy's records in flight for this run.
func (c Config) inFlight() int {
	switch n := c.Strategy.RecordsInFlight; n {
	case strategy.RuntimeDefaultInFlight:
		return runtime.GOMAXPROCS(0)
	case strategy.UnboundedInFlight:
		return c.Records
	default:
		return min(n, c.Records)
	}
}

func (c Config) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.TimeScale)
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
	// ErrReset: the mock service refused the reset before the run (an
	// ErrAdmin).
	ErrReset = fmt.Errorf("%w: the reset was refused", ErrAdmin)
)

// Run processes cfg.Records records against cfg.Target and returns the
// result. It first checks that the target accepts connections and asks it,
// with OPTIONS on the enrichment route, whether it is a loadlab mock
// service; only then does it read the service's metrics after the run
// (ErrUnreachable, ErrTimeScaleMismatch before anything is sent). A target
// that fails mid-run does not stop the run: every record still ends in a
// terminal state, and the failed calls are counted as errors. When ctx ends,
// records not yet begun are NotStarted and the result is Partial.
//
// A time-bounded run (cfg.Duration, or cfg.Phases) begins records as slots
// free until the duration has passed (or the cap of cfg.Records is
// reached), then lets those in progress finish: its Records are the
// records begun. The run's clock starts after identification, profile and
// reset, at cfg.StartAt when given.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg = cfg.resolved()
	if err := cfg.Validate(); err != nil {
		return Result{}, fmt.Errorf("records: %w", err)
	}
	inFlight := cfg.inFlight()
	p := cfg.PipelineOrLab()
	r := &runner{cfg: cfg, pipeline: p, http: transport.NewDial(inFlight, cfg.Dial), sent: map[string]*atomic.Int64{}}
	defer r.http.CloseIdleConnections()
	identity, err := identify(ctx, cfg, p, r.http)
	if err != nil {
		return Result{}, fmt.Errorf("records: %w", err)
	}
	if err := prepare(ctx, cfg, identity, r.http); err != nil {
		return Result{}, err
	}
	metrics := budgets.NewMetrics(cfg.Registerer)
	for _, d := range p.Dependencies {
		metrics.Register(d.Name)
		r.sent[d.Name] = new(atomic.Int64)
	}
	if r.budgets, r.adaptive, err = buildBudgets(cfg, p, metrics); err != nil {
		return Result{}, fmt.Errorf("records: %w", err)
	}
	if r.retry, err = newRetrier(cfg.Strategy.Retries, p, cfg.TimeScale); err != nil {
		return Result{}, fmt.Errorf("records: %w", err)
	}

	start := waitStart(ctx, cfg.StartAt)
	r.tally = newTally(cfg, start)
	stopSampling := sample(cfg, start, metrics, p.Names(), r.tally.inFlight, r.limits)
	begun := r.issue(ctx, inFlight)
	elapsed := time.Since(start)
	timeline := stopSampling()

	return r.result(ctx, ended{identity: identity, metrics: metrics, start: start, elapsed: elapsed, begun: begun, inFlight: inFlight, timeline: timeline}), nil
}
