package records_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// Against a target that is not a loadlab mock service, the run sends the
// records' calls and nothing else: no health check, no metrics.
func TestForeignTargetGetsOnlyTheRecords(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method+" "+r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == api.PathRecords {
			w.WriteHeader(http.StatusCreated)
		}
	}))
	defer srv.Close()
	cfg := records.DefaultConfig()
	cfg.Target, cfg.Records = srv.URL, 10
	res, err := records.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for req := range seen {
		if req != "POST /enrich" && req != "POST /records" && req != "OPTIONS /enrich" {
			t.Errorf("the foreign target was sent %q", req)
		}
	}
	if seen["POST /records"] != 10 || res.Complete != 10 || res.ServerIdentified || res.Server != nil || res.PeakConcurrentWrite != nil {
		t.Errorf("requests %v; complete %d, identified %v, server %v, peak writes %v", seen, res.Complete, res.ServerIdentified, res.Server, res.PeakConcurrentWrite)
	}
}

// A write that was sent and never answered is write_unknown, with its
// record id; the system of record, which finishes work after the client
// leaves, stored every one of them.
func TestUnknownWritesCarryTheirIDs(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testUnknownWrites)
}

func testUnknownWrites(t *testing.T) {
	cfg := config.Default()
	p := cfg.Profiles[config.ProfileHealthy]
	p.Enrichment = latency.Spec{Kind: "fixed", Value: time.Millisecond}
	p.Records = latency.Spec{Kind: "fixed", Value: 300 * time.Millisecond}
	cfg.Profiles[config.ProfileHealthy] = p
	m := startMock(t, cfg)
	res := run(t, m, "C4", 6, func(c *records.Config) { c.CallTimeout = 100 * time.Millisecond })
	if res.WriteUnknown != 6 || len(res.UnknownWrites) != 6 || res.Failed != 0 {
		t.Fatalf("write_unknown %d (ids %v), failed %d; want all 6 unknown, with ids", res.WriteUnknown, res.UnknownWrites, res.Failed)
	}
	time.Sleep(300 * time.Millisecond) // the writes' service time: they are done
	synctest.Wait()
	if n := m.stats(t).StoredWrites; n != 6 {
		t.Errorf("the server stored %d writes 300 ms after the run, want 6", n)
	}
	for _, id := range res.UnknownWrites {
		if !strings.HasPrefix(id, "C4-") {
			t.Errorf("id %q is not one of the run's", id)
		}
	}
}

// An interrupted run ends every record in a state: those not begun are
// not_started, and the result is partial.
func TestInterruptedRunIsPartial(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testInterruptedPartial)
}

func testInterruptedPartial(t *testing.T) {
	m := startMock(t, config.Default())
	ccfg := m.config()
	ccfg.Records = 2000
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	res, err := records.Run(ctx, ccfg)
	if err != nil {
		t.Fatal(err)
	}
	checkAddsUp(t, res)
	if !res.Partial || res.NotStarted == 0 || res.Complete == 0 || res.Failed != 0 {
		t.Errorf("partial %v, not started %d, complete %d, failed %d; want none failed for the interruption", res.Partial, res.NotStarted, res.Complete, res.Failed)
	}
}

// A loadlab mock at another time scale is refused before any record.
func TestTimeScaleMismatchIsRefused(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testMismatch)
}

func testMismatch(t *testing.T) {
	m := startMock(t, config.Default()) // time scale 1
	cfg := m.config()
	cfg.TimeScale = 0.1
	if _, err := records.Run(context.Background(), cfg); !errors.Is(err, records.ErrTimeScaleMismatch) {
		t.Errorf("got %v, want ErrTimeScaleMismatch", err)
	}
	if st := m.stats(t); st.Stations[api.Enrichment].HighWater.Offered != 0 {
		t.Errorf("a record was sent: %+v", st.Stations[api.Enrichment])
	}
}

func TestRecordsCap(t *testing.T) {
	cfg := records.DefaultConfig()
	cfg.Records = records.MaxRecords + 1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "1000000") {
		t.Errorf("got %v, want the limit named", err)
	}
}

// C3's one pool of permits honours a rate limit per dependency: it was
// validated, printed and ignored.
func TestSharedBudgetAppliesItsRate(t *testing.T) {
	t.Parallel() // on a fake clock: nothing here depends on what else runs
	synctest.Test(t, testSharedRate)
}

func testSharedRate(t *testing.T) {
	m := startMock(t, config.Default())
	const rate = 40.0 // enrichment calls per lab second
	res := run(t, m, "C3", 20, func(c *records.Config) { c.Strategy.Rates = map[string]float64{records.Enrichment: rate} })
	calls := 0
	for _, n := range res.Calls[records.Enrichment] {
		calls += n
	}
	// 60 enrichment calls at 40/s, the first at once: at least 1.475 lab s.
	if lab := res.DurationSeconds; calls != 60 || lab < float64(calls-1)/rate {
		t.Errorf("%d enrichment calls in %.3f lab s; want 60, no faster than %g/s", calls, lab, rate)
	}
	if res.Complete != 20 || res.PeakInFlight[records.Enrichment]+res.PeakInFlight[records.Records] > 30 {
		t.Errorf("complete %d, peaks %v", res.Complete, res.PeakInFlight)
	}
}

// A redirect is the target's answer: the write is failed, and the place it
// points to is never asked.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method+" "+r.URL.Path]++
		mu.Unlock()
		http.Redirect(w, r, "/account/delete?confirm=yes", http.StatusFound)
	}))
	defer srv.Close()
	cfg := records.DefaultConfig()
	cfg.Target, cfg.Records = srv.URL, 3
	res, err := records.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete+res.Incomplete != 0 || res.Failed != 3 {
		t.Errorf("complete %d, incomplete %d, failed %d; want all 3 failed", res.Complete, res.Incomplete, res.Failed)
	}
	if seen["GET /account/delete"] != 0 {
		t.Errorf("the redirect was followed: %v", seen)
	}
}
