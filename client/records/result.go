package records

import (
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
