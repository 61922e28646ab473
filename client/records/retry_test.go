package records_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// quietStats waits until the mock service's system of record has finished
// every write (attempts whose client left are still served and stored),
// and returns its figures.
// On the fake clock, a minute after the run is past every hang, and
// synctest.Wait returns once every request the client wrote is parsed,
// counted and served.
func quietStats(t *testing.T, m *mock) api.Stats {
	t.Helper()
	time.Sleep(time.Minute)
	synctest.Wait()
	st := m.stats(t)
	if rs := st.Stations[api.Records]; rs.Busy != 0 || rs.QueueLength != 0 {
		t.Fatalf("the system of record did not go quiet: %+v", rs)
	}
	return st
}

// Retried writes keep their record id: a write whose first attempt timed
// out but was stored is answered 200 (a duplicate) on its retry, and the
// record counts once. On the real mock service, writes that hang (20%,
// 100 ms) against a 60 ms call timeout: every record ends in one state, the
// store holds exactly the writes answered 201 or 200 plus the unknown ones
// it holds, the server's duplicates are the 200s the client saw plus at
// most the unanswered attempts of retried writes, and every request the
// client wrote is one the server counted, but for requests the client
// abandoned at their call timeout before the server read them.
func TestRetriedWritesReconcile(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testRetriedWrites)
}

func testRetriedWrites(t *testing.T) {
	cfg := config.Default()
	p := cfg.Profiles[config.ProfileHealthy]
	p.Records = latency.Spec{Kind: "fixed", Value: 30 * time.Millisecond, HangProbability: 0.2, HangDuration: 100 * time.Millisecond}
	cfg.Profiles[config.ProfileHealthy] = p
	m := startMock(t, cfg)
	res := run(t, m, "C2-retries", 300, func(c *records.Config) { c.CallTimeout = 60 * time.Millisecond })
	st := quietStats(t, m)
	a := res.Attempts[records.Records]
	stored := 0
	for _, id := range res.UnknownWrites {
		if _, ok, err := m.admin.Record(context.Background(), id); err != nil {
			t.Fatal(err)
		} else if ok {
			stored++
		}
	}
	t.Logf("writes: %d first attempts, %d retries, %.2f requests per first attempt; client 201 %d, 200 %d, unknown %d (%d stored), unanswered attempts of retried writes %d; server stored %d, duplicates %d",
		a.FirstAttempts, a.Retries, a.Amplification, res.WritesCreated, res.WritesDuplicate, res.WriteUnknown, stored,
		res.RetriedWritesUnanswered, st.StoredWrites, st.DuplicateWrites)
	if a.FirstAttempts != 300 || a.Retries == 0 || a.Amplification <= 1 || res.WritesDuplicate == 0 {
		t.Errorf("want 300 first attempts, retries, and some retried writes answered 200: %+v, %d duplicates", a, res.WritesDuplicate)
	}
	if got := res.WritesCreated + res.WritesDuplicate + stored; got != st.StoredWrites {
		t.Errorf("stored: client %d (201 %d + 200 %d + unknown found stored %d), server %d", got, res.WritesCreated, res.WritesDuplicate, stored, st.StoredWrites)
	}
	if d := st.DuplicateWrites - res.WritesDuplicate; d < 0 || d > res.RetriedWritesUnanswered {
		t.Errorf("duplicates: server %d, client saw %d, unanswered attempts of retried writes %d", st.DuplicateWrites, res.WritesDuplicate, res.RetriedWritesUnanswered)
	}
	n := 0
	for _, o := range api.Outcomes {
		n += int(st.Stations[api.Records].Requests[o])
	}
	// The server counts every request it read. A request the client wrote
	// and then gave up on (its call timeout) can be lost with the
	// connection the client closed before the server read it (2 of 708 on
	// a loaded CI machine): only those may be missing.
	abandoned := res.RetriedWritesUnanswered + res.WriteUnknown
	if sent := res.CallsSent[records.Records]; n > sent || sent-n > abandoned || n > a.FirstAttempts+a.Retries {
		t.Errorf("write requests: server %d, client wrote %d (%d abandoned at their call timeout), attempts %d", n, sent, abandoned, a.FirstAttempts+a.Retries)
	}
}

// Under a sustained write overload (slow writes, no queue: a 503 past the
// sixth), naive retries multiply the writes offered; the same strategy with
// a retry budget keeps the retries within what the budget allows: 20% of
// first attempts plus its reserve (2 per lab second, and one lab second's
// worth at the start).
func TestRetryBudgetBoundsAmplification(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testRetryBudget)
}

func testRetryBudget(t *testing.T) {
	cfg := config.Default()
	cfg.Records.Queue, cfg.Profile = 0, config.ProfileSlowWrite
	m := startMock(t, cfg)
	timed := func(c *records.Config) { c.Duration = 20 * time.Second }
	naive := run(t, m, "C2-retries", records.MaxRecords, timed)
	budgeted := run(t, m, "C2-retries", records.MaxRecords, func(c *records.Config) {
		timed(c)
		c.Strategy.Retries = strategy.LabRetries(true)
	})
	n, b := naive.Attempts[records.Records], budgeted.Attempts[records.Records]
	lab := budgeted.DurationSeconds
	allowed := 0.2*float64(b.FirstAttempts) + 2*lab + 2
	t.Logf("naive: %d first, %d retries, %.2f× (%d 503s, %.1f accepted per lab s); budgeted: %d first, %d retries (%d denied, at most %.0f allowed in %.1f lab s), %.2f× (%d 503s, %.1f accepted per lab s)",
		n.FirstAttempts, n.Retries, n.Amplification, naive.WriteRejections, naive.AcceptedPerLabSecond,
		b.FirstAttempts, b.Retries, b.Denied, allowed, lab, b.Amplification, budgeted.WriteRejections, budgeted.AcceptedPerLabSecond)
	if n.Retries == 0 || n.Denied != 0 || n.Amplification <= b.Amplification {
		t.Errorf("naive retries: %+v; want retries, none denied, and more amplification than the budget's %.2f", n, b.Amplification)
	}
	if b.Denied == 0 || float64(b.Retries) > allowed {
		t.Errorf("budgeted retries: %+v; want some denied and at most %.0f retries", b, allowed)
	}
}
