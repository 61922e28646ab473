package judge

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
)

// Reconcile is a pure function: unit cases for what a run can get wrong.
func TestReconcileFigures(t *testing.T) {
	c := records.Result{WritesCreated: 10, WritesDuplicate: 1, WriteRejections: 2, WriteUnknown: 1,
		CallsSent: map[string]int{api.Enrichment: 30, api.Records: 14}}
	s := api.Stats{StoredWrites: 12, DuplicateWrites: 1, Stations: map[string]api.StationStats{
		api.Enrichment: {Requests: map[api.Outcome]float64{api.OutcomeServed: 28, api.OutcomeServedAfterClientLeft: 2}},
		api.Records:    {Requests: map[api.Outcome]float64{api.OutcomeServed: 12, api.OutcomeRejected: 2}},
	}}
	if rc := Reconcile(c, s, resultsfile.Resolution{Stored: 1}); len(rc.Differences) != 0 {
		t.Errorf("consistent figures: %q", rc.Differences)
	}
	rc := Reconcile(c, s, resultsfile.Resolution{Absent: 1})
	if len(rc.Differences) != 1 || !strings.Contains(rc.Differences[0], "writes stored: client 11") {
		t.Errorf("an unknown write absent while the server stored 12: %q", rc.Differences)
	}
	rc = Reconcile(c, s, resultsfile.Resolution{Unresolved: 1})
	if len(rc.Differences) != 2 || !strings.Contains(rc.Differences[1], "1 of 1 not resolved") {
		t.Errorf("an unresolved unknown write: %q", rc.Differences)
	}
	// A retried write whose 200 was lost: one more duplicate on the server
	// than the client saw is within the unanswered attempts of retried
	// writes, two are not.
	s.DuplicateWrites = 2
	if rc := Reconcile(c, s, resultsfile.Resolution{Stored: 1}); len(rc.Differences) != 1 || !strings.Contains(rc.Differences[0], "duplicate writes: client 1 answered 200 (and 0 attempts") {
		t.Errorf("a duplicate the client cannot account for: %q", rc.Differences)
	}
	c.RetriedWritesUnanswered = 1
	if rc := Reconcile(c, s, resultsfile.Resolution{Stored: 1}); len(rc.Differences) != 0 {
		t.Errorf("a duplicate within the unanswered attempts of retried writes: %q", rc.Differences)
	}
	s.DuplicateWrites = 3
	if rc := Reconcile(c, s, resultsfile.Resolution{Stored: 1}); len(rc.Differences) != 1 {
		t.Errorf("two duplicates past one unanswered attempt: %q", rc.Differences)
	}
	s.DuplicateWrites, c.RetriedWritesUnanswered = 1, 0
	c.WritesDuplicate, c.WriteRejections = 0, 3
	c.CallsSent[api.Enrichment] = 31
	rc = Reconcile(c, s, resultsfile.Resolution{Stored: 1})
	if len(rc.Differences) != 4 {
		t.Errorf("stored, duplicates, rejections and enrichment calls differ: %q", rc.Differences)
	}
}

// In a run with faults or restarts a store lacking acknowledged writes is
// the measurement, not a difference: the run stays valid and
// acknowledged_writes_lost counts them, so "no acknowledged write is lost"
// can be refuted. A store holding more than the client can account for
// still does not reconcile; after a restart only the store is compared.
func TestFaultedRunsMeasureLostWrites(t *testing.T) {
	c := records.Result{WritesCreated: 10, CallsSent: map[string]int{api.Records: 10}}
	server := func(stored int) api.Stats {
		return api.Stats{StoredWrites: stored, Stations: map[string]api.StationStats{
			api.Records: {Requests: map[api.Outcome]float64{api.OutcomeServed: 10}}}}
	}
	if rc := Reconcile(c, server(9), resultsfile.Resolution{}); len(rc.Differences) != 1 {
		t.Errorf("steady run, one acknowledged write missing: %q", rc.Differences)
	}
	if rc := ReconcileRestarted(c, server(9), resultsfile.Resolution{}, 0); len(rc.Differences) != 0 {
		t.Errorf("faulted run, one acknowledged write missing: %q", rc.Differences)
	}
	if rc := ReconcileRestarted(c, server(11), resultsfile.Resolution{}, 1); len(rc.Differences) != 1 || rc.Partial == "" {
		t.Errorf("restarted run, a write stored that nobody sent: %+v", rc)
	}
	q := resultsfile.Quiet{Quiet: true}
	rec := resultsfile.RunRecord{Status: resultsfile.RunValid, Faulted: true, Client: &c, Server: &api.Stats{StoredWrites: 9, Stations: server(9).Stations},
		QuietBefore: &q, QuietAfter: &q, Unknown: &resultsfile.Resolution{}}
	Derive(&rec, 1)
	if !rec.Valid() || rec.Metrics["acknowledged_writes_lost"] != 1 {
		t.Errorf("faulted run with a lost write: %s %q, lost %v", rec.Status, rec.Reason, rec.Metrics["acknowledged_writes_lost"])
	}
}
