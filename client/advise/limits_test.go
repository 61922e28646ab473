package advise_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/advise"
	"github.com/loadlab/loadlab/client/pipeline"
)

func f64(v float64) *float64 { return &v }

// inventory: 10 ms a call, a token bucket of 150/s answering 429 with
// Retry-After: 1 beyond it, as a probe of 2 s steps sees it; records: 6
// workers of 30 ms and 503 beyond 12.
func rateLimited() map[string]advise.Capacity {
	inv := advise.Capacity{ServiceTimeSeconds: 0.010, RejectionsBeginAt: intp(2)}
	inv.Plan.TimeoutSeconds = 2
	inv.Steps = []advise.Step{
		{Concurrency: 1, OKPerSecond: 98, WindowSeconds: 2, Requests: 196, MaxSeconds: f64(0.0121)},
		{Concurrency: 2, OKPerSecond: 151.5, WindowSeconds: 2, Requests: 2000, Rejected: 1697, MaxSeconds: f64(0.0133),
			RejectedStatuses: map[string]int{"429": 1697}, RetryAfterSeconds: f64(1)},
		{Concurrency: 4, OKPerSecond: 150.6, WindowSeconds: 2, Requests: 4000, Rejected: 3699, MaxSeconds: f64(0.0135),
			RejectedStatuses: map[string]int{"429": 3699}, RetryAfterSeconds: f64(1)},
	}
	rec := labProbes()["records"]
	for i := range rec.Steps {
		// 41 ms at most while a worker is free, 82 ms with the queue full.
		rec.Steps[i].Requests, rec.Steps[i].MaxSeconds = 100, f64(0.041)
	}
	rec.Steps[len(rec.Steps)-1].MaxSeconds = f64(0.082)
	return map[string]advise.Capacity{"enrichment": inv, "records": rec}
}

// A dependency that refused with 429 is limited by rate: the strategy
// holds it to the least rate of the steps it refused (less one call per
// window), its permits carry that rate (Little's law) though the unlimited
// probe drew 429s there, and those 429s are not failures retries would
// meet.
func TestARateLimitGetsARate(t *testing.T) {
	a, err := advise.Advise(pipeline.Lab(), rateLimited(), 0)
	if err != nil {
		t.Fatal(err)
	}
	e := a.Dependencies["enrichment"]
	// min(151.5, 150.6) − 1/2 = 150.1, floored to 3 digits: 150; 150 ×
	// 10 ms = 1.5 → 2 permits, 150 calls/s, 50 records/s (3 calls each).
	if e.RatePerSecond != 150 || e.Permits != 2 || e.PermitsFrom != "Little's law at its rate: rate × service time" ||
		e.CallsPerSecond != 150 || !near(e.RecordsPerSecond, 50) || e.FailedFraction != 0 {
		t.Errorf("enrichment: %+v", e)
	}
	if s := a.Strategy("advised"); s.Rates["enrichment"] != 150 || len(s.Rates) != 1 || s.Permits["enrichment"] != 2 {
		t.Errorf("strategy %+v", s)
	}
	if w := a.Dependencies["records"]; w.RatePerSecond != 0 || w.Permits != 6 {
		t.Errorf("records, refused by 503s, got a rate: %+v", w)
	}
}

// The call timeout is the slowest success any step saw, the queue full
// included, the longest over the dependencies (the run has one); the
// permit wait, the longest a call can wait if every call ahead holds its
// permit for a whole call timeout, after a rate token each; retries are
// suggested only where calls failed at the advised permits, with a budget
// of that share.
func TestTimeoutsAndRetriesFromTheProbe(t *testing.T) {
	a, err := advise.Advise(pipeline.Lab(), rateLimited(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r := a.Run
	// Records in flight: 50/s × (3 × 0.010 + 0.030) s = 3. Enrichment:
	// ceil(1/2) × 0.082 + 3/150 = 0.102, rounded up 0.11; records: none.
	if r.CallTimeoutSeconds != 0.082 || a.Dependencies["enrichment"].CallTimeoutSeconds != 0.014 || a.RecordsInFlight != 3 ||
		r.PermitTimeoutSeconds != 0.11 || r.Retries != nil || !strings.HasPrefix(r.RetriesFrom, "none: the probes saw no failure") ||
		a.Dependencies["records"].CallTimeoutFrom != "the slowest success at any step (0.082s, at concurrency 13)" {
		t.Errorf("run limits %+v, in flight %d, %+v", r, a.RecordsInFlight, a.Dependencies["records"])
	}
	// Timeouts at the advised step: the probe's own timeout, warned of;
	// 5 of 100 failed: retries with a budget of 5%, backing off as the
	// rejections' Retry-After asked.
	p := rateLimited()
	rec := p["records"]
	rec.Steps[5].Timeouts, rec.Steps[5].RetryAfterSeconds = 5, f64(1.5)
	rec.Plan.TimeoutSeconds = 2
	p["records"] = rec
	if a, err = advise.Advise(pipeline.Lab(), p, 0); err != nil {
		t.Fatal(err)
	}
	r = a.Run
	if r.CallTimeoutSeconds != 2 || r.Retries == nil || r.Retries.Budget.Ratio != 0.05 || r.Retries.Budget.MinPerSecond != 0 ||
		r.Retries.BaseBackoff != 1500*time.Millisecond || r.Retries.MaxBackoff != 1500*time.Millisecond || r.Retries.Attempts != 3 {
		t.Errorf("with timeouts: %+v %+v", r, r.Retries)
	}
	if w := strings.Join(a.Warnings, "|"); !strings.Contains(w, "records: 5 of 100 calls at concurrency 6 outlasted the probe's timeout of 2s") {
		t.Errorf("warnings %q", a.Warnings)
	}
	// More records in flight than permits: they wait their turn. The lab
	// at 500/s: 70 in flight; writes: ceil((70 − 6) / 6) = 11 turns of
	// the run's call timeout, 150 ms: 1.65 s, rounded up 1.7 s.
	lab := labProbes()
	for name, c := range lab {
		for i := range c.Steps {
			c.Steps[i].Requests, c.Steps[i].MaxSeconds = 100, f64(map[string]float64{"enrichment": 0.15, "records": 0.041}[name])
		}
	}
	if a, err = advise.Advise(pipeline.Lab(), lab, 500); err != nil {
		t.Fatal(err)
	}
	if cmd := a.RunCommand("", "s.yaml"); a.RecordsInFlight != 70 ||
		cmd != "loadlab run --strategy-file s.yaml --call-timeout 150ms --permit-timeout 1.7s" ||
		!strings.HasPrefix(a.Run.PermitTimeoutFrom, "records: the longest a call can wait with 70 records in flight, 6 permits") {
		t.Errorf("%d in flight: %q, %s", a.RecordsInFlight, cmd, a.Run.PermitTimeoutFrom)
	}
}

// A fast service behind a rate limit refuses from the lowest concurrency
// probed: its rate, not its permits, keeps it from refusing, so that is
// no error.
func TestARateLimitFromTheFirstStep(t *testing.T) {
	p := rateLimited()
	inv := p["enrichment"]
	inv.Steps = inv.Steps[1:] // from concurrency 2: refused at the first step
	inv.RejectionsBeginAt = intp(2)
	p["enrichment"] = inv
	a, err := advise.Advise(pipeline.Lab(), p, 0)
	if e := a.Dependencies["enrichment"]; err != nil || e.RatePerSecond != 150 || e.Permits != 2 || e.CallsPerSecond != 150 {
		t.Errorf("%+v, %v", e, err)
	}
	// Refused by 503 at the first step: no budget avoids it.
	inv.Steps = append([]advise.Step(nil), inv.Steps...)
	for i := range inv.Steps {
		inv.Steps[i].RejectedStatuses = map[string]int{"503": inv.Steps[i].Rejected}
	}
	p["enrichment"] = inv
	if _, err := advise.Advise(pipeline.Lab(), p, 0); err == nil || !strings.Contains(err.Error(), "rejections began at concurrency 2, the lowest probed") {
		t.Errorf("503s from the first step: %v", err)
	}
}
