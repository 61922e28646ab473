package probe

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// Bodies of the mock service's two load routes, a unique id each.
const (
	writeBody  = `{"id":"{{.ID}}","complete":true}`
	enrichBody = `{"record_id":"{{.ID}}","step":1}`
)

// probeMock starts the real mock service with cfg on an in-memory network
// and probes route with the given steps, each measured for window after a
// warm-up. Call it in a synctest bubble: the probe and the service share
// its fake clock, so what the probe measures is the service's shape, with
// none of the client's or the machine's own time in it.
func probeMock(t *testing.T, mcfg config.Config, route, body string, steps []int, window, warm time.Duration, maxRate float64) Result {
	t.Helper()
	m := mocktest.Start(t, mocktest.Options{Config: mcfg, InMemory: true})
	cfg := Default()
	cfg.Target, cfg.Method, cfg.Body, cfg.Dial = m.URL+route, "POST", body, m.Dial
	cfg.Concurrency, cfg.Step, cfg.WarmUp, cfg.MaxRate = steps, window, warm, maxRate
	start := time.Now()
	res, err := Run(context.Background(), cfg, func(s Step) { t.Log(StepLine(s)) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v; plateau %.1f/s at %v, knee %v %s, rejections at %v, USL %s",
		time.Since(start).Round(time.Millisecond), res.PlateauPerSecond, res.PlateauSteps, deref(res.Knee), res.KneeReason,
		deref(res.RejectionsBeginAt), uslText(res.USL))
	return res
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// The system of record (6 workers, 6 queue slots, 503 beyond; 30 ms):
// the knee is 6, rejections begin at 13 concurrent writes, where the
// probe stops (step 14 is never run), and the service time at low load
// is within 10% of the profile's.
func TestProbeRecordsHealthy(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		svc := config.DefaultWriteTime.Seconds()
		d := time.Duration(svc * float64(time.Second))
		probeRecords(t, config.Default(), svc, 6*d, 2*d)
	})
}

// Under slow writes (150 ms) the same: knee 6, rejections at 13.
func TestProbeRecordsSlowWrite(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		mcfg := config.Default()
		mcfg.Profile = config.ProfileSlowWrite
		svc := config.DefaultSlowWriteTime.Seconds()
		d := time.Duration(svc * float64(time.Second))
		probeRecords(t, mcfg, svc, 5*d, 3*d/2)
	})
}

// probeRecords probes the system of record with steps of window after
// warm and checks what the probe found.
func probeRecords(t *testing.T, mcfg config.Config, svc float64, window, warm time.Duration) {
	t.Helper()
	res := probeMock(t, mcfg, api.PathRecords, writeBody, []int{1, 5, 6, 7, 12, 13, 14}, window, warm, 400)
	for _, p := range recordsProblems(res, svc) {
		t.Error(p)
	}
}

func recordsProblems(res Result, svc float64) []string {
	var p []string
	if res.Knee == nil || *res.Knee != 6 {
		p = append(p, fmt.Sprintf("knee %v (%s), want 6", deref(res.Knee), res.KneeReason))
	}
	if res.RejectionsBeginAt == nil || *res.RejectionsBeginAt != 13 {
		p = append(p, fmt.Sprintf("rejections begin at %v, want 13", deref(res.RejectionsBeginAt)))
	}
	if res.ServiceTimeSeconds == nil || math.Abs(*res.ServiceTimeSeconds-svc) > 0.1*svc {
		p = append(p, fmt.Sprintf("service time %v s, want %v s ± 10%%", deref(res.ServiceTimeSeconds), svc))
	}
	if want := 6 / svc; math.Abs(res.PlateauPerSecond-want) > 0.05*want {
		p = append(p, fmt.Sprintf("plateau %.1f/s, want 6 workers / %v s = %.1f/s ± 5%%", res.PlateauPerSecond, svc, want))
	}
	last := res.Steps[len(res.Steps)-1]
	if !res.StoppedEarly || !strings.Contains(res.StopReason, "rejection ratio") || last.Concurrency != 13 {
		p = append(p, fmt.Sprintf("stopped early %v (%q) after concurrency %d; want a stop at the rejection limit after 13",
			res.StoppedEarly, res.StopReason, last.Concurrency))
	}
	return p
}

// The enrichment API with its 256 workers, probed to 64: throughput still
// rises at every step, so there is no knee below 64.
func TestProbeEnrichmentNoKneeBelow64(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testNoKneeBelow64)
}

func testNoKneeBelow64(t *testing.T) {
	res := probeMock(t, config.Default(), api.PathEnrich, enrichBody, []int{1, 4, 16, 32, 48, 64}, 500*time.Millisecond, 150*time.Millisecond, 2000)
	if res.Knee != nil || !strings.Contains(res.KneeReason, "still rising") {
		t.Errorf("knee %v (%s), want none: still rising", deref(res.Knee), res.KneeReason)
	}
	if len(res.Steps) != 6 || res.RejectionsBeginAt != nil || res.StoppedEarly {
		t.Fatalf("%d steps, rejections at %v, stopped early %q; want all 6, none", len(res.Steps), deref(res.RejectionsBeginAt), res.StopReason)
	}
	if x48, x64 := res.Steps[4].OKPerSecond, res.Steps[5].OKPerSecond; x64 < 1.2*x48 {
		t.Errorf("ok/s %.1f at 64 vs %.1f at 48: want the throughput still rising (×4/3)", x64, x48)
	}
}

// Started with 16 workers, the enrichment API's knee is its worker count:
// 14 users stay below 95% of the plateau (at 14/16 of it), 16 reach it,
// and 32 establish it. (Step 15, at 15/16, would be 1.25% from the line:
// within the noise of a lognormal service time over a short window.) A
// step's throughput varies with its draws of the service time: over 2 s
// windows, 16 users reached 98–103% of the plateau over the mock's seeds
// 1–8.
func TestProbeEnrichmentFindsWorkerCount(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testFindsWorkerCount)
}

func testFindsWorkerCount(t *testing.T) {
	mcfg := config.Default()
	mcfg.Enrichment.Workers = 16
	res := probeMock(t, mcfg, api.PathEnrich, enrichBody, []int{14, 16, 32}, 2*time.Second, 300*time.Millisecond, 4000)
	if res.Knee == nil || *res.Knee != 16 {
		t.Errorf("knee %v (%s), want 16", deref(res.Knee), res.KneeReason)
	}
}
