package records

import (
	"context"
	"math"
	"time"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/mockservice/api"
)

// Result is one run's outcome. Complete + Incomplete + WriteRejected +
// StepRejected + Failed + WriteUnknown + Interrupted + NotStarted is
// always Records. In a time-bounded run (Config.Duration), Records is the
// records begun: those that never began because time ran out (or the run
// was interrupted) are not records, and NotStarted is 0.
type Result struct {
	Strategy      string            `json:"strategy"`
	Params        strategy.Strategy `json:"strategy_params"`
	Records       int               `json:"records"`
	Complete      int               `json:"complete"`
	Incomplete    int               `json:"incomplete"`
	WriteRejected int               `json:"write_rejected"`
	StepRejected  int               `json:"step_rejected,omitempty"`
	Failed        int               `json:"failed"`
	WriteUnknown  int               `json:"write_unknown"`
	Interrupted   int               `json:"interrupted"`
	NotStarted    int               `json:"not_started"`
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
	// Attempts counts first attempts, retries and denied retries per
	// dependency, with the requests written per first attempt.
	Attempts map[string]RetryCounts `json:"attempts"`
	// RetriedWritesUnanswered counts the attempts, of writes attempted more
	// than once, sent without an answer: each may be a duplicate the server
	// counted and the client never saw answered 200.
	RetriedWritesUnanswered int `json:"retried_writes_unanswered,omitempty"`
	// ErrorKinds counts the calls that ended in an error by dependency and
	// kind: "records: status 405", "lookup: connection refused".
	ErrorKinds     map[ErrorKey]int `json:"error_kinds,omitempty"`
	PermitTimeouts int              `json:"permit_timeouts"`
	RateTimeouts   int              `json:"rate_timeouts"`
	CallTimeouts   int              `json:"call_timeouts"`
	Errors         int              `json:"errors"`
	TimeScale      float64          `json:"time_scale"`
	// ServerIdentified: the target identified itself as a loadlab mock
	// service, so its metrics were read; when false, every figure is the
	// client's own and no request but the records' calls was sent.
	ServerIdentified bool `json:"server_identified"`
	// Partial: the run was interrupted; records not begun are NotStarted
	// (in a time-bounded run, they are not records).
	Partial bool `json:"partial"`
	// StartedAt is when the run's clock started (wall clock, UTC), after
	// identification, profile and reset, and Config.StartAt if given;
	// StartLateSeconds is how many real seconds after Config.StartAt.
	StartedAt        time.Time `json:"started_at"`
	StartLateSeconds float64   `json:"start_late_seconds,omitempty"`
	// DurationLimit is Config.Duration in lab seconds (0: batch-bounded).
	DurationLimit float64 `json:"duration_limit_lab_seconds,omitempty"`
	// RecordsCapReached: a time-bounded run began its last record allowed
	// by --records before its duration ended (it ended early, by the cap).
	RecordsCapReached bool `json:"records_cap_reached,omitempty"`
	// AdaptiveLimits is each adaptive limit (C5) at the run's end.
	AdaptiveLimits map[string]int `json:"adaptive_limits,omitempty"`
	// Limits summarises each adaptive limit over the run's samples (none
	// without a sample interval).
	Limits map[string]LimitStats `json:"limits,omitempty"`
	// Phases are a phased run's figures, phase by phase, then "drain" when
	// records ended after the last phase.
	Phases []PhaseResult `json:"phases,omitempty"`
	// PerSecond counts every lab second of a time-bounded run, the drain
	// included.
	PerSecond []SecondCounts `json:"per_second,omitempty"`
	Server    *api.Stats     `json:"server,omitempty"`
	Timeline  []Sample       `json:"timeline,omitempty"`
	cpulimit.Runtime
}

// ended is what a run's records leave when the last has ended: the target
// as identified, the budgets' metrics, when the run's clock started, how
// long it ran, the records begun and their limit in flight, the sampled
// timeline.
type ended struct {
	identity        *api.Identity
	metrics         *budgets.Metrics
	start           time.Time
	elapsed         time.Duration
	begun, inFlight int
	timeline        []Sample
}

// result is the run's Result, assembled in one place: the records begun
// and the tally's states, seconds and phases, the budgets' classes and
// peaks, calls sent, writes created, retries, adaptive limits, rates, and
// the server's own view when the target is a loadlab mock service.
func (r *runner) result(ctx context.Context, e ended) Result {
	c := r.tally.counted(r.cfg, e.elapsed)
	res := Result{Strategy: r.cfg.Strategy.Name, Params: r.cfg.Strategy,
		Records: r.cfg.Records, NotStarted: r.cfg.Records - e.begun,
		Complete: c.states[Complete], Incomplete: c.states[Incomplete],
		WriteRejected: c.states[WriteRejected], StepRejected: c.states[StepRejected], Failed: c.states[Failed],
		WriteUnknown: c.states[WriteUnknown], Interrupted: c.states[Interrupted],
		UnknownWrites: c.unknown, PeakRecordsInFlight: c.peak, PerSecond: c.perSecond, Phases: c.phases,
		DurationSeconds: e.elapsed.Seconds(), RecordsInFlight: e.inFlight,
		PeakInFlight: map[string]int{}, Calls: map[string]map[budgets.Class]int{},
		TimeScale: r.cfg.TimeScale, Runtime: cpulimit.ReadRuntime(), Timeline: e.timeline,
		ServerIdentified: e.identity != nil, Partial: ctx.Err() != nil || stopped(r.cfg.Stop), StartedAt: e.start.UTC()}
	if r.cfg.Duration > 0 { // records that never began for want of time are not records
		res.Records, res.NotStarted = e.begun, 0
		res.DurationLimit, res.RecordsCapReached = r.cfg.Duration.Seconds(), e.begun == r.cfg.Records
	}
	if !r.cfg.StartAt.IsZero() {
		res.StartLateSeconds = max(e.start.Sub(r.cfg.StartAt).Seconds(), 0)
	}
	for dep, st := range e.metrics.Snapshot() {
		res.PeakInFlight[dep] = st.PeakInFlight
		res.Calls[dep] = st.Calls
		res.PermitTimeouts += st.Calls[budgets.PermitTimeout]
		res.RateTimeouts += st.Calls[budgets.RateTimeout]
		res.CallTimeouts += st.Calls[budgets.CallTimeout]
		res.Errors += st.Calls[budgets.Error]
	}
	res.WriteRejections = res.Calls[r.pipeline.Write()][budgets.Rejected]
	res.CallsSent = map[string]int{}
	for dep, n := range r.sent {
		res.CallsSent[dep] = int(n.Load())
	}
	res.WritesCreated, res.WritesDuplicate = int(r.created.Load()), int(r.duplicate.Load())
	res.Attempts, res.RetriedWritesUnanswered = r.retry.result(res.CallsSent), int(r.retry.unansweredRetries.Load())
	res.ErrorKinds = r.kinds
	res.AdaptiveLimits = r.limits()
	res.Limits = limitStats(e.timeline, 0, math.Inf(1))
	for i := range res.Phases {
		res.Phases[i].Limits = limitStats(e.timeline, res.Phases[i].Start, res.Phases[i].End)
	}
	res.AcceptedPerRealSecond = float64(res.Complete+res.Incomplete) / e.elapsed.Seconds()
	res.AcceptedPerLabSecond = res.AcceptedPerRealSecond * r.cfg.TimeScale
	// The server's own view, only from a loadlab mock service.
	if e.identity != nil {
		if st, err := (api.Client{BaseURL: r.cfg.Target, HTTP: r.http}).Scrape(context.WithoutCancel(ctx)); err == nil {
			res.Server = &st
			if w, ok := st.Stations[r.pipeline.Write()]; ok {
				res.PeakConcurrentWrite = &w.HighWater.Offered
			}
		}
	}
	return res
}
