package judge

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/testkit"
)

// splitResults cuts complete results into the n partial results their
// shards would have written (the same runs, each in its shard).
func splitResults(t *testing.T, res *resultsfile.Results, n int) []Part {
	t.Helper()
	mockCfg := config.Default()
	mockCfg.Seed, mockCfg.TimeScale = res.Experiment.Seed, res.Experiment.TimeScale
	byUnit := map[plan.Unit]resultsfile.RunRecord{}
	for _, run := range res.Runs {
		byUnit[plan.Unit{Cell: run.Cell, Run: run.Run}] = run
	}
	var parts []Part
	for i := range n {
		p := *res
		p.Environment.BinarySHA256 = "0123456789abcdef"
		p.Environment.Hostname = fmt.Sprintf("node-%d", i)
		units := plan.ShardUnits(res.Experiment, plan.Shard{Index: i, Count: n}, mockCfg)
		p.Shard = &plan.ShardRecord{Shard: plan.Shard{Index: i, Count: n}, Units: units}
		p.Runs = nil
		for _, u := range units {
			run, ok := byUnit[u]
			if !ok {
				t.Fatalf("no run %v", u)
			}
			p.Runs = append(p.Runs, run)
		}
		p.Cells = Summaries(p.Experiment, p.Runs, mockCfg, p.Advised)
		p.Verdicts = Rejudge(&p)
		parts = append(parts, Part{Source: fmt.Sprintf("shard-%d", i), Results: &p})
	}
	return parts
}

// Merging the shards of committed results gives back exactly the runs,
// cells and verdicts one machine wrote, whatever the number of shards and
// the order they are given in.
func TestMergeGivesWhatOneMachineWrote(t *testing.T) {
	// Not parallel, for the same reason (CPU-heavy under -race).
	for _, dir := range []string{"../results/conditions-v1", "../results/container-v3"} {
		res, err := resultsfile.ReadResults(dir + "/results.json")
		if err != nil {
			t.Fatal(err)
		}
		mockCfg := config.Default()
		mockCfg.Seed, mockCfg.TimeScale = res.Experiment.Seed, res.Experiment.TimeScale
		for _, n := range []int{1, 3} {
			parts := splitResults(t, res, n)
			slices.Reverse(parts)
			merged, err := Merge(parts, mockCfg)
			if err != nil {
				t.Fatalf("%s in %d shards: %v", dir, n, err)
			}
			if testkit.JSON(t, merged.Runs) != testkit.JSON(t, res.Runs) {
				t.Errorf("%s in %d shards: the merged runs differ from one machine's", dir, n)
			}
			if err := compare(dir, []any{"cells", merged.Cells, res.Cells, "verdicts", merged.Verdicts, res.Verdicts}); err != nil {
				t.Errorf("%s in %d shards: %v", dir, n, err)
			}
			if merged.Shard != nil || len(merged.Shards) != n || merged.Shards[n-1].Environment.Hostname != fmt.Sprintf("node-%d", n-1) || merged.Partial != "" {
				t.Errorf("%s in %d shards: shard %v, shards %d, partial %q", dir, n, merged.Shard, len(merged.Shards), merged.Partial)
			}
			// The merged results are results like any: check recomputes them.
			if _, err := Check(merged, mockCfg); err != nil {
				t.Errorf("%s in %d shards: check: %v", dir, n, err)
			}
		}
	}
}

func TestMergeRefuses(t *testing.T) {
	// Not parallel, for the same reason (CPU-heavy under -race).
	res, err := resultsfile.ReadResults("../results/conditions-v1/results.json")
	if err != nil {
		t.Fatal(err)
	}
	mockCfg := config.Default()
	mockCfg.Seed, mockCfg.TimeScale = res.Experiment.Seed, res.Experiment.TimeScale
	edit := func(i int, f func(*resultsfile.Results)) []Part {
		parts := splitResults(t, res, 3)
		f(parts[i].Results)
		return parts
	}
	for _, tt := range []struct {
		name  string
		parts []Part
		want  string
	}{
		{"none", nil, "no partial results"},
		{"missing", splitResults(t, res, 3)[:2], "missing shard(s) 2/3"},
		{"twice", append(splitResults(t, res, 3), splitResults(t, res, 3)[1]), "shard 1/3 given twice: shard-1 and shard-1"},
		{"not a shard", edit(1, func(r *resultsfile.Results) { r.Shard = nil }), "shard-1 is not a shard's partial results"},
		{"other split", append(splitResults(t, res, 2)[:1], splitResults(t, res, 3)[1:]...), "different splits: 2 shards vs 3 shards"},
		{"experiment file", edit(2, func(r *resultsfile.Results) { r.ExperimentSHA256 = "ffff" }), "different experiment files"},
		{"design", edit(2, func(r *resultsfile.Results) { r.Experiment.Runs = 5 }), "different designs: runs: 3 vs 5"},
		{"hypotheses", edit(1, func(r *resultsfile.Results) { r.HypothesesSHA256 = "eeee" }), "different hypotheses"},
		{"binary", edit(1, func(r *resultsfile.Results) { r.Environment.BinarySHA256 = "dddd" }), "different binaries"},
		{"interrupted", edit(2, func(r *resultsfile.Results) { r.Partial = "interrupted after 3 of 12 runs" }), "shard-2 (shard 2/3) is incomplete: interrupted after 3 of 12 runs"},
		{"a run short", edit(0, func(r *resultsfile.Results) { r.Runs = r.Runs[1:] }), "shard-0: shard 0/3 holds 11 runs, not its 12 units in order"},
		{"other units", edit(0, func(r *resultsfile.Results) { r.Shard.Units = r.Shard.Units[1:] }), "lists other units than the split gives"},
		{"calibration", edit(1, func(r *resultsfile.Results) { c := *r.Calibration; c.MaxBias = 0.5; r.Calibration = &c }), "took the time-scale calibration differently: MaxBias: 0.02 vs 0.5"},
		{"uncalibrated", edit(1, func(r *resultsfile.Results) { r.Calibration = &resultsfile.Calibration{Skipped: "turned off"} }), "took the time-scale calibration differently: "},
		{"index", edit(2, func(r *resultsfile.Results) { r.Shard.Index = 5 }), "says it is shard 5/3"},
	} {
		_, err := Merge(tt.parts, mockCfg)
		if !errors.Is(err, ErrMerge) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an ErrMerge saying %q", tt.name, err, tt.want)
		}
	}
}
