package advise_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/advise"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/strategy"
)

func intp(n int) *int { return &n }

// steps rising linearly at rate per unit of concurrency up to a plateau.
func steps(max int, rate, plateau float64) []advise.Step {
	var s []advise.Step
	for c := 1; c <= max; c++ {
		s = append(s, advise.Step{Concurrency: c, OKPerSecond: min(float64(c)*rate, plateau)})
	}
	return s
}

// The lab's dependencies as the write-up gives them: enrichment 120 ms
// with no knee up to 64, the system of record 30 ms with 6 workers.
func labProbes() map[string]advise.Capacity {
	return map[string]advise.Capacity{
		"enrichment": {ServiceTimeSeconds: 0.120, Steps: steps(64, 1/0.120, 1e9)},
		"records":    {ServiceTimeSeconds: 0.030, Knee: intp(6), RejectionsBeginAt: intp(13), Steps: steps(13, 1/0.030, 200)},
	}
}

func TestAdviseTheLab(t *testing.T) {
	a, err := advise.Advise(pipeline.Lab(), labProbes(), 150)
	if err != nil {
		t.Fatal(err)
	}
	e, w := a.Dependencies["enrichment"], a.Dependencies["records"]
	// Enrichment: 64 permits × 8.33/s = 533 calls/s = 178 records/s;
	// writes: 6 permits, 200 calls/s = 200 records/s. Time per record
	// 3 × 0.12 + 0.03 = 0.39 s; 150/s × 0.39 s = 58.5 → 59 in flight.
	switch {
	case e.Permits != 64 || w.Permits != 6 || w.PermitsFrom != "the knee":
		t.Errorf("permits %d, %d (%s)", e.Permits, w.Permits, w.PermitsFrom)
	case a.Bottleneck != "enrichment" || !near(a.RateBound, 64/0.120/3):
		t.Errorf("bottleneck %s at %v", a.Bottleneck, a.RateBound)
	case !near(a.TimePerRecord, 0.39) || a.RecordsInFlight != 59 || a.PlannedRate != 150:
		t.Errorf("time per record %v, in flight %d, planned %v", a.TimePerRecord, a.RecordsInFlight, a.PlannedRate)
	case len(a.Warnings) != 1 || !strings.Contains(a.Warnings[0], "enrichment: no knee up to 64"):
		t.Errorf("warnings %q", a.Warnings)
	}
	// Past the bottleneck: sized for the bound, and said.
	a, _ = advise.Advise(pipeline.Lab(), labProbes(), 500)
	if a.PlannedRate != a.RateBound || a.RecordsInFlight != 70 || !strings.Contains(strings.Join(a.Warnings, "|"), "exceeds what enrichment allows") {
		t.Errorf("over the bound: planned %v, in flight %d, %q", a.PlannedRate, a.RecordsInFlight, a.Warnings)
	}
}

// A knee past the first rejection is cut to one below it; rejections from
// the first step leave no budget; a missing or foreign probe is an error.
func TestAdviseRules(t *testing.T) {
	p := labProbes()
	r := p["records"]
	r.Knee, r.RejectionsBeginAt = intp(10), intp(8)
	p["records"] = r
	a, err := advise.Advise(pipeline.Lab(), p, 0)
	if err != nil || a.Dependencies["records"].Permits != 7 || a.Dependencies["records"].PermitsFrom != "the highest concurrency probed below the first rejection" {
		t.Errorf("knee past the first rejection: %+v, %v", a.Dependencies["records"], err)
	}
	// Sparse steps: never past the first rejection means the highest step
	// probed below it, not one below the rejection.
	sparse := p["enrichment"]
	sparse.Steps = []advise.Step{{Concurrency: 1, OKPerSecond: 8}, {Concurrency: 2, OKPerSecond: 16}, {Concurrency: 4, OKPerSecond: 32},
		{Concurrency: 8, OKPerSecond: 60}, {Concurrency: 16, OKPerSecond: 61}}
	sparse.RejectionsBeginAt = intp(16)
	p["enrichment"] = sparse
	a, err = advise.Advise(pipeline.Lab(), p, 0)
	if e := a.Dependencies["enrichment"]; err != nil || e.Permits != 8 || e.CallsPerSecond != 60 {
		t.Errorf("sparse steps, rejections at 16: %+v, %v; want 8 permits at 60 calls/s", e, err)
	}
	// Little's law takes the lowest step's mean when the probe gave one.
	mean := 0.2
	sparse.Steps[0].MeanSeconds = &mean
	p["enrichment"] = sparse
	if a, _ = advise.Advise(pipeline.Lab(), p, 0); a.Dependencies["enrichment"].ServiceTimeSeconds != 0.2 {
		t.Errorf("mean not used: %+v", a.Dependencies["enrichment"])
	}
	r.RejectionsBeginAt = intp(1)
	p["records"] = r
	if _, err := advise.Advise(pipeline.Lab(), p, 0); err == nil || !strings.Contains(err.Error(), "rejections began at concurrency 1") {
		t.Errorf("rejections at 1: %v", err)
	}
	p = labProbes()
	delete(p, "records")
	if _, err := advise.Advise(pipeline.Lab(), p, 0); err == nil {
		t.Error("a missing probe accepted")
	}
	p = labProbes()
	p["ledger"] = p["records"]
	if _, err := advise.Advise(pipeline.Lab(), p, 0); err == nil {
		t.Error("a probe of a dependency the pipeline lacks accepted")
	}
}

// The file advise writes is one loadlab run --strategy-file reads back.
func TestAdviceFileRoundTrips(t *testing.T) {
	a, err := advise.Advise(pipeline.Lab(), labProbes(), 150)
	if err != nil {
		t.Fatal(err)
	}
	data, err := a.File("advised", "written by a test\nsecond line")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := strategy.LoadFile(f, pipeline.Lab())
	if err != nil || s.Name != "advised" || s.RecordsInFlight != 59 || s.PermitsFor("records") != 6 || s.PermitsFor("enrichment") != 64 {
		t.Errorf("read back %+v, %v\n%s", s, err, data)
	}
	if !strings.HasPrefix(string(data), "# written by a test\n# second line\n") {
		t.Errorf("no comment:\n%s", data)
	}
}

func near(a, b float64) bool { return a > b*0.999 && a < b*1.001 }

// A probe held by its own --max-rate, or pointed at another path than the
// dependency's, is warned about.
func TestAdviseWarnsOfProbesThatDoNotMeasureTheDependency(t *testing.T) {
	p := labProbes()
	r := p["records"]
	r.Steps = slices.Clone(r.Steps)
	r.Steps[5].AtRateLimit = true // concurrency 6, the knee
	r.Plan.Target = "http://127.0.0.1:8080/enrich"
	p["records"] = r
	a, err := advise.Advise(pipeline.Lab(), p, 0)
	w := strings.Join(a.Warnings, "|")
	if err != nil || !strings.Contains(w, "records: the probe's --max-rate held its step at concurrency 6") ||
		!strings.Contains(w, "records: its probe was of http://127.0.0.1:8080/enrich, and its calls go to path /records") {
		t.Errorf("warnings %q, %v", a.Warnings, err)
	}
}

// A dependency that refused before any knee showed has a limit, not an
// unknown: its budget sits below the first rejection, and no warning says
// that probing further may allow more.
func TestNoKneeButRejectionsIsALimit(t *testing.T) {
	probes := labProbes()
	probes["enrichment"] = advise.Capacity{ServiceTimeSeconds: 0.120, RejectionsBeginAt: intp(17), Steps: steps(17, 1/0.120, 1e9)}
	a, err := advise.Advise(pipeline.Lab(), probes, 0)
	if err != nil {
		t.Fatal(err)
	}
	e := a.Dependencies["enrichment"]
	if e.Permits != 16 || e.PermitsFrom != "the highest concurrency probed below the first rejection" ||
		strings.Contains(strings.Join(a.Warnings, "|"), "probing further may allow more") {
		t.Errorf("permits %d from %q, warnings %q", e.Permits, e.PermitsFrom, a.Warnings)
	}
}
