package judge

import (
	"fmt"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
)

// Reconcile compares the client's result with the server's quiet stats. It
// is a pure function of its inputs, so loadlab check recomputes it.
func Reconcile(c records.Result, s api.Stats, unknown resultsfile.Resolution) resultsfile.Reconciliation {
	return reconcile(c, s, unknown, 0, false)
}

// ReconcileRestarted is Reconcile for a run during which the mock service's
// process restarted restarts times: its counters then start at the last
// restart, so only what its store keeps across restarts is compared — every
// write answered 201, and every write of unknown outcome found stored, is
// in the store, and nothing else is — and Partial says so.
func ReconcileRestarted(c records.Result, s api.Stats, unknown resultsfile.Resolution, restarts int) resultsfile.Reconciliation {
	return reconcile(c, s, unknown, restarts, true)
}

// reconcile compares; with faulted (a scenario with faults or restarts) a
// store that lacks acknowledged writes is not a difference but the
// measurement (acknowledged_writes_lost > 0, which the hypotheses judge),
// while a store holding more than the client can account for still is.
func reconcile(c records.Result, s api.Stats, unknown resultsfile.Resolution, restarts int, faulted bool) resultsfile.Reconciliation {
	r := resultsfile.Reconciliation{
		Client: resultsfile.ClientCount{WritesCreated: c.WritesCreated, WritesDuplicate: c.WritesDuplicate,
			WriteRejections: c.WriteRejections, WriteUnknown: c.WriteUnknown, CallsSent: map[string]int{},
			RetriedWritesUnanswered: c.RetriedWritesUnanswered},
		Server: resultsfile.ServerCount{StoredWrites: s.StoredWrites, DuplicateWrites: s.DuplicateWrites,
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
