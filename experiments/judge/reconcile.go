package judge

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/client/records"
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

// Reconcile compares the client's result with the server's quiet stats. It
// is a pure function of its inputs, so loadlab check recomputes it.
func Reconcile(c records.Result, s api.Stats, unknown Resolution) Reconciliation {
	return reconcile(c, s, unknown, 0, false)
}

// ReconcileRestarted is Reconcile for a run during which the mock service's
// process restarted restarts times: its counters then start at the last
// restart, so only what its store keeps across restarts is compared — every
// write answered 201, and every write of unknown outcome found stored, is
// in the store, and nothing else is — and Partial says so.
func ReconcileRestarted(c records.Result, s api.Stats, unknown Resolution, restarts int) Reconciliation {
	return reconcile(c, s, unknown, restarts, true)
}

// reconcile compares; with faulted (a scenario with faults or restarts) a
// store that lacks acknowledged writes is not a difference but the
// measurement (acknowledged_writes_lost > 0, which the hypotheses judge),
// while a store holding more than the client can account for still is.
func reconcile(c records.Result, s api.Stats, unknown Resolution, restarts int, faulted bool) Reconciliation {
	r := Reconciliation{
		Client: ClientCount{WritesCreated: c.WritesCreated, WritesDuplicate: c.WritesDuplicate,
			WriteRejections: c.WriteRejections, WriteUnknown: c.WriteUnknown, CallsSent: map[string]int{},
			RetriedWritesUnanswered: c.RetriedWritesUnanswered},
		Server: ServerCount{StoredWrites: s.StoredWrites, DuplicateWrites: s.DuplicateWrites,
			RejectedWrites: int(s.Stations[api.Records].Requests[api.OutcomeRejected]), Requests: map[string]int{}},
		WriteUnknownStored: unknown.Stored, WriteUnknownAbsent: unknown.Absent, WriteUnknownUnresolved: unknown.Unresolved,
	}
	differ := func(format string, a ...any) { r.Differences = append(r.Differences, fmt.Sprintf(format, a...)) }
	// A 200 is a retried write whose earlier attempt was stored: it counts
	// once, as the store does.
	if got := c.WritesCreated + c.WritesDuplicate + unknown.Stored; got != s.StoredWrites && !(faulted && got > s.StoredWrites) {
		differ("writes stored: client %d (%d answered 201 + %d answered 200 + %d of unknown outcome found stored), server %d",
			got, c.WritesCreated, c.WritesDuplicate, unknown.Stored, s.StoredWrites)
	}
	if restarts > 0 {
		r.Partial = fmt.Sprintf("the mock service restarted %d time(s) during the run: its request, rejection and duplicate counts start at the last restart, so only the store is compared", restarts)
		if unknown.Unresolved > 0 {
			differ("writes of unknown outcome: %d of %d not resolved", unknown.Unresolved, c.WriteUnknown)
		}
		return r
	}
	// The server counts a duplicate for every attempt of a stored write
	// after the first to reach it; the client sees those answered. An
	// attempt of a retried write that went unanswered may be one more.
	if d := s.DuplicateWrites - c.WritesDuplicate; d < 0 || d > c.RetriedWritesUnanswered {
		differ("duplicate writes: client %d answered 200 (and %d attempts of retried writes unanswered), server %d",
			c.WritesDuplicate, c.RetriedWritesUnanswered, s.DuplicateWrites)
	}
	if c.WriteRejections != r.Server.RejectedWrites {
		differ("rejected writes: client %d, server %d", c.WriteRejections, r.Server.RejectedWrites)
	}
	if unknown.Unresolved > 0 {
		differ("writes of unknown outcome: %d of %d not resolved", unknown.Unresolved, c.WriteUnknown)
	}
	for _, dep := range api.Stations {
		st := s.Stations[dep]
		n := 0
		for _, o := range api.Outcomes {
			n += int(st.Requests[o])
		}
		r.Server.Requests[dep] = n
		r.Client.CallsSent[dep] = c.CallsSent[dep]
		if c.CallsSent[dep] != n {
			differ("%s calls: client sent %d, server counted %d", dep, c.CallsSent[dep], n)
		}
	}
	return r
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
