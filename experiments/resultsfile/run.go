package resultsfile

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/mockservice/api"
)

// RunStatus is how a run ended: only valid runs enter statistics and
// verdicts.
type RunStatus string

// Run statuses.
const (
	RunValid RunStatus = "valid"
	// RunFailed: the run produced no usable result (the child failed,
	// exited 1, or was killed at its wall-clock limit).
	RunFailed RunStatus = "failed"
	// RunContaminated: the mock service was still busy with earlier work
	// when the run's reset came.
	RunContaminated RunStatus = "contaminated"
	// RunInvalid: what the client saw does not reconcile with what the
	// server counted.
	RunInvalid RunStatus = "invalid"
)

// Reconciliation sets what the client saw beside what the server counted,
// once the server was quiet after the run.
type Reconciliation struct {
	Client ClientCount `json:"client"`
	Server ServerCount `json:"server"`
	// The writes whose outcome the client did not know, as the system of
	// record answered GET /records/{id} for each: stored, absent, or not
	// asked or not answered (unresolved).
	WriteUnknownStored     int `json:"write_unknown_stored"`
	WriteUnknownAbsent     int `json:"write_unknown_absent"`
	WriteUnknownUnresolved int `json:"write_unknown_unresolved"`
	// Partial, when set, says which figures could not be compared, and why.
	Partial string `json:"partial,omitempty"`
	// Differences lists every figure that does not reconcile; empty for a
	// valid run.
	Differences []string `json:"differences,omitempty"`
}

// ClientCount is the client's side of a reconciliation.
type ClientCount struct {
	WritesCreated   int            `json:"writes_created"`   // answered 201
	WritesDuplicate int            `json:"writes_duplicate"` // answered 200
	WriteRejections int            `json:"write_rejections"` // answered 503 or 429
	WriteUnknown    int            `json:"write_unknown"`
	CallsSent       map[string]int `json:"calls_sent"` // written in full, per dependency
	// RetriedWritesUnanswered: attempts of retried writes sent without an
	// answer (each may be a duplicate the client never saw answered).
	RetriedWritesUnanswered int `json:"retried_writes_unanswered,omitempty"`
}

// ServerCount is the server's side of a reconciliation.
type ServerCount struct {
	StoredWrites    int `json:"stored_writes"`
	DuplicateWrites int `json:"duplicate_writes"`
	RejectedWrites  int `json:"rejected_writes"`
	// Requests per station: served + rejected + served after the client
	// left + cancelled.
	Requests map[string]int `json:"requests"`
}

// Resolution is what the system of record answered for the writes whose
// outcome the client did not know: a raw observation of the run.
type Resolution struct {
	Stored     int `json:"stored"`
	Absent     int `json:"absent"`
	Unresolved int `json:"unresolved"`
}

// Quiet is what the runner saw while waiting for the mock service to finish
// earlier work: the figures of the last look when it did not.
type Quiet struct {
	Quiet  bool    `json:"quiet"`
	Waited float64 `json:"waited_seconds"` // real seconds
	Limit  float64 `json:"limit_seconds"`  // real seconds
	// Busy workers, queued and open requests per station at the last look.
	Busy   map[string]int `json:"busy,omitempty"`
	Queued map[string]int `json:"queued,omitempty"`
	Open   map[string]int `json:"open,omitempty"`
	Error  string         `json:"error,omitempty"`
}

func (q Quiet) String() string {
	if q.Error != "" {
		return fmt.Sprintf("not known to be quiet after %.1f s: %s", q.Waited, q.Error)
	}
	var parts []string
	for _, st := range api.Stations {
		parts = append(parts, fmt.Sprintf("%s %d busy, %d queued, %d open", st, q.Busy[st], q.Queued[st], q.Open[st]))
	}
	return fmt.Sprintf("not quiet after %.1f s (limit %.1f s): %s", q.Waited, q.Limit, strings.Join(parts, "; "))
}

// PhaseEvent is one change the runner made during a phased run, and when:
// times in lab seconds from the run's start (real seconds / time scale).
type PhaseEvent struct {
	Phase     string      `json:"phase"`
	Action    PhaseAction `json:"action"`
	Scheduled float64     `json:"scheduled"`
	At        float64     `json:"at"`
	// Done is when the action had taken effect (for a restart: when the
	// mock service answered again with the phase's settings).
	Done float64 `json:"done"`
	Err  string  `json:"error,omitempty"`
	// Note: for a restart, what the restarted mock service's store
	// replayed.
	Note string `json:"note,omitempty"`
}

// Restarts counts the restarts the runner made during the run.
func (r RunRecord) Restarts() int {
	n := 0
	for _, ev := range r.PhaseEvents {
		if ev.Action.IsRestart() {
			n++
		}
	}
	return n
}

// PhaseTrouble says which phase change failed, if one did: the run did not
// have the conditions it was to measure.
func (r RunRecord) PhaseTrouble() string {
	for _, ev := range r.PhaseEvents {
		if ev.Err != "" {
			return fmt.Sprintf("phase %s: %s at %.2f lab s: %s", ev.Phase, ev.Action, ev.At, ev.Err)
		}
	}
	return ""
}

// PhaseAction is a kind of change the runner makes during a phased run.
type PhaseAction string

// Phase actions.
const (
	// ActionSet: the mock service's live settings changed (PATCH
	// /admin/config).
	ActionSet PhaseAction = "set"
	// ActionFaults: the fault proxies' toxics replaced.
	ActionFaults PhaseAction = "faults"
	// ActionRestartTerm and ActionRestartKill: the mock service's process
	// restarted after a graceful shutdown or a crash.
	ActionRestartTerm PhaseAction = "restart TERM"
	ActionRestartKill PhaseAction = "restart KILL"
)

// RestartAction is the action of a restart with signal sig.
func RestartAction(sig phases.Signal) PhaseAction {
	if sig == phases.SignalKill {
		return ActionRestartKill
	}
	return ActionRestartTerm
}

// IsRestart says whether the action restarted the mock service.
func (a PhaseAction) IsRestart() bool { return a == ActionRestartTerm || a == ActionRestartKill }
