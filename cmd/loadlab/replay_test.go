package main

import (
	"encoding/json"
	"math"
	"os/exec"
	"testing"

	"github.com/loadlab/loadlab/experiments/compare"
	"github.com/loadlab/loadlab/experiments/exptest"
)

// loadlab simulate concurrency --real, built without the race detector as
// users run it, on the published workloads 1–3 at time scale 0.2 (about
// 13 s), over the real network: for every limit, the median peak queue
// and calls in flight differ from the model's by at most the limit's
// near-ties (none: equal), and a workload's completed and timed-out counts
// differ from the model's by at most its near-ties (a client deadline
// within 5 ms of the server's finish, or between it and where the model
// puts it: earlier by how far the request fell behind the model's
// timeline — a stall beside other work can turn each either way), so with
// none they are equal; bounded to the workers the count medians are equal.
// How far the client's outcome and the server's drain times are from the
// model's is this machine's speed (its per-call overhead, its stalls):
// logged here, measured by BenchmarkCallOverhead, and compared exactly on
// a fake clock (experiments/compare TestReplayAgreesWithTheModelOnAFakeClock).
// At time scale 1 on workloads 1–10 (README) the medians of every count
// are equal and the times within 0.4%.
func TestSimulateRealAgreesWithTheModel(t *testing.T) {
	// Not in parallel: it times real calls, and the package's other tests
	// start experiments in child processes that load both cores.
	bin := exptest.BuildLoadlab(t)
	const scale = 0.2
	out, err := exec.Command(bin, "simulate", "concurrency", "--real", "--seeds", "1-3", "--time-scale", "0.2", "--json").Output()
	if err != nil {
		t.Fatalf("simulate --real: %v\n%s", err, out)
	}
	var res struct {
		Strategies []compare.Strategy `json:"strategies"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Strategies) != 4 {
		t.Fatalf("%d strategies, want the 4 limits", len(res.Strategies))
	}
	for _, s := range res.Strategies {
		mm, rm := s.Model.Median, s.Real.Median
		// A near-tie can turn a peak either way as it turns a count.
		if len(s.Trials) != 3 || len(s.ModelTrials) != 3 || math.Abs(rm.PeakQueue-mm.PeakQueue) > float64(s.NearTies) ||
			math.Abs(rm.PeakInFlight-mm.PeakInFlight) > float64(s.NearTies) {
			t.Errorf("%s: real %+v, model %+v, %d trials", s.Name, rm, mm, len(s.Trials))
		}
		lag, overhead, along := 0.0, 0.0, 0.0 // ms, real
		for i, tr := range s.Trials {
			lag, overhead, along = max(lag, tr.AdmissionLagMs), max(overhead, tr.CallOverheadMs), max(along, tr.ChainOverheadMs)
			m := s.ModelTrials[i]
			if math.Abs(tr.Metrics.Completed-m.Completed) > float64(tr.NearTies) || math.Abs(tr.Metrics.TimedOut-m.TimedOut) > float64(tr.NearTies) {
				t.Errorf("%s, workload %d: completed %v, timed out %v; model %v, %v; %d near-ties", s.Name, tr.Seed,
					tr.Metrics.Completed, tr.Metrics.TimedOut, m.Completed, m.TimedOut, tr.NearTies)
			}
		}
		if s.Limit <= 8 && (rm.Completed != mm.Completed || rm.TimedOut != mm.TimedOut) {
			t.Errorf("%s: median completed %v, timed out %v; model %v, %v", s.Name, rm.Completed, rm.TimedOut, mm.Completed, mm.TimedOut)
		}
		t.Logf("%s: completed %v vs %v, outcome %.1f vs %.1f ms, drain %.1f vs %.1f ms, %d near-ties, admission lag ≤ %.1f ms real, call overhead ≤ %.2f ms real, %.1f ms along a chain",
			s.Name, rm.Completed, mm.Completed, rm.ClientOutcomeMs, mm.ClientOutcomeMs, rm.ServerDrainMs, mm.ServerDrainMs, s.NearTies, lag, overhead, along)
	}
}
