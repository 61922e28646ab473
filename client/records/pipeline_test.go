package records_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// threeDeps is not the lab's shape: two optional calls to a geo service, a
// required fraud check on another host, then a write with a header.
const threeDeps = `name: checkout
dependencies:
  - name: geo
    path: /enrich
    body: '{"record_id":{{json .ID}},"step":{{.Step}}}'
    success: [200]
  - name: fraud
    base_url: %s
    path: /enrich
    body: '{"record_id":{{json .ID}},"step":9}'
    success: [200]
  - name: ledger
    path: /records
    body: '{"id":{{json .ID}},"complete":{{.Complete}}}'
    headers: {X-Tenant: t1}
steps:
  - dependency: geo
    repeat: 2
  - dependency: fraud
    required: true
  - dependency: ledger
    required: true
`

// A pipeline of three dependencies on two real mock services runs end to
// end: every record is accounted for, each dependency got exactly its
// calls (client and each server agree), each budget held, and a required
// step that is refused ends the record without its write.
func TestThreeDependencyPipeline(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testThreeDependencies)
}

func testThreeDependencies(t *testing.T) {
	const n = 40
	nw := mocktest.NewNetwork() // both services on it: the client reaches both
	a := wrap(mocktest.Start(t, mocktest.Options{Config: config.Default(), Network: nw}))
	cfgB := config.Default()
	cfgB.Enrichment = config.Station{Workers: 2, Queue: 0, RejectStatus: 503}
	b := wrap(mocktest.Start(t, mocktest.Options{Config: cfgB, Network: nw}))
	file := filepath.Join(t.TempDir(), "checkout.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(threeDeps, b.url)), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		fraud int // permits; 0: none, and the fraud service's 2 workers refuse the rest
	}{{"budgeted", 2}, {"fraud-unbudgeted", 0}} {
		if err := b.admin.Reset(t.Context()); err != nil {
			t.Fatal(err)
		}
		res := run(t, a, "bounded:16", n, func(cfg *records.Config) {
			cfg.Pipeline = p
			cfg.RunID = c.name + "-"
			cfg.Strategy.Permits = map[string]int{"geo": 8, "ledger": 4}
			cfg.SampleInterval = 20 * time.Millisecond
			if c.fraud > 0 {
				cfg.Strategy.Permits["fraud"] = c.fraud
			}
		})
		sa, sb := a.stats(t), b.stats(t)
		geo, fraud, ledger := sa.Stations[api.Enrichment], sb.Stations[api.Enrichment], sa.Stations[api.Records]
		accepted := res.Complete + res.Incomplete
		switch {
		case !res.ServerIdentified || res.Complete+res.Incomplete+res.StepRejected != n || res.WriteRejected != 0 || res.Trouble() != "":
			t.Errorf("%s: %+v", c.name, res)
		case res.CallsSent["geo"] != 2*n || geo.Requests[api.OutcomeServed] != float64(2*n):
			t.Errorf("%s: geo calls: client %d, server %v; want %d", c.name, res.CallsSent["geo"], geo.Requests, 2*n)
		case res.CallsSent["fraud"] != n || fraud.Requests[api.OutcomeServed]+fraud.Requests[api.OutcomeRejected] != float64(n):
			t.Errorf("%s: fraud calls: client %d, server %v; want %d", c.name, res.CallsSent["fraud"], fraud.Requests, n)
		case res.CallsSent["ledger"] != accepted || sa.StoredWrites != accepted || sb.StoredWrites != 0:
			t.Errorf("%s: ledger calls %d, stored %d (other host %d); want %d accepted records", c.name,
				res.CallsSent["ledger"], sa.StoredWrites, sb.StoredWrites, accepted)
		case res.PeakInFlight["geo"] > 8 || res.PeakInFlight["ledger"] > 4 || ledger.HighWater.Offered > 4:
			t.Errorf("%s: peaks %v, server's writes %d: a budget was exceeded", c.name, res.PeakInFlight, ledger.HighWater.Offered)
		}
		sampled := 0 // the timeline has the pipeline's own dependencies
		for _, smp := range res.Timeline {
			if f := smp.Calls["fraud"]; f > 0 && (c.fraud == 0 || f <= c.fraud) && len(smp.Calls) == 3 {
				sampled++
			}
		}
		if sampled == 0 {
			t.Errorf("%s: no sample shows the fraud calls in flight within the budget: %+v", c.name, res.Timeline)
		}
		if c.fraud > 0 && (res.StepRejected != 0 || fraud.HighWater.Offered > c.fraud || res.Complete != n) {
			t.Errorf("%s: %d rejected, fraud offered %d at once (budget %d), %d complete", c.name, res.StepRejected, fraud.HighWater.Offered, c.fraud, res.Complete)
		}
		if c.fraud == 0 && (res.StepRejected == 0 || res.StepRejected != int(fraud.Requests[api.OutcomeRejected])) {
			t.Errorf("%s: %d records ended step_rejected, the fraud service refused %v", c.name, res.StepRejected, fraud.Requests[api.OutcomeRejected])
		}
		t.Logf("%s: complete %d, rejected at the fraud check %d; calls %v", c.name, res.Complete, res.StepRejected, res.CallsSent)
	}
}

// A call answered with a status the dependency does not list fails, and
// the result says which dependency answered what: 404 from a path the mock
// service does not have, connection refused from a closed port.
func TestErrorsAreCountedByKind(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testErrorKinds)
}

func testErrorKinds(t *testing.T) {
	m := startMock(t, config.Default())
	file := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(file, []byte(`name: wrong
dependencies:
  - name: lookup
    path: /nope
  - name: gone
    base_url: http://127.0.0.1:1
    path: /x
  - name: ledger
    path: /records
    body: '{"id":{{json .ID}},"complete":{{.Complete}}}'
steps:
  - dependency: lookup
  - dependency: gone
  - dependency: ledger
    required: true
`), 0o644)
	p, err := pipeline.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, m, "bounded:4", 10, func(cfg *records.Config) { cfg.Pipeline = p })
	if res.ErrorKinds[records.ErrorKey{Dependency: "lookup", Kind: records.StatusKind(404)}] != 10 || res.ErrorKinds[records.ErrorKey{Dependency: "gone", Kind: records.ConnRefused}] != 10 || res.Incomplete != 10 ||
		!strings.Contains(res.Trouble(), "lookup: status 404 ×10") {
		t.Errorf("error kinds %v, incomplete %d; trouble %q", res.ErrorKinds, res.Incomplete, res.Trouble())
	}
}
