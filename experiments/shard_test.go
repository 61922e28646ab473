package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

func TestParseShard(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Shard
		err  string
	}{
		{"0/1", Shard{0, 1}, ""},
		{"3/4", Shard{3, 4}, ""},
		{"3/2", Shard{}, "the index 3 must be in [0, 2)"},
		{"2/2", Shard{}, "the index 2 must be in [0, 2)"},
		{"-1/2", Shard{}, "the index -1 must be in [0, 2)"},
		{"0/0", Shard{}, "the count 0 must be in [1, 1000]"},
		{"1", Shard{}, "is not i/n"},
		{"a/b", Shard{}, "whole numbers"},
		{"$(JOB_COMPLETION_INDEX)/4", Shard{}, "the index was not substituted"},
	} {
		got, err := ParseShard(tt.in)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseShard(%q): error %v; want one saying %q", tt.in, err, tt.err)
		}
	}
}

// Every run of every cell goes to exactly one shard, in the order one
// machine runs them, the split is the same every time it is computed, and
// no shard's expected time exceeds another's by more than one run's.
func TestShardUnitsPartitionTheMatrix(t *testing.T) {
	// Not parallel: CPU-heavy under -race, it would crowd the timing of the
	// package's parallel tests (the advised cells' probes).
	for _, file := range []string{"replication.yaml", "adaptive.yaml", "conditions.yaml", "container.yaml"} {
		spec, err := LoadSpec(file)
		if err != nil {
			t.Fatal(err)
		}
		mockCfg := config.Default()
		mockCfg.Seed, mockCfg.TimeScale = spec.Seed, spec.TimeScale
		all := spec.Units()
		pos := map[Unit]int{}
		for i, u := range all {
			pos[u] = i
		}
		costs := map[Cell]time.Duration{}
		for _, c := range spec.Cells() {
			costs[c] = spec.unitCost(mockCfg, c)
		}
		cost := func(u Unit) time.Duration { return costs[u.Cell] }
		var longest time.Duration
		for _, u := range all {
			longest = max(longest, cost(u))
		}
		for _, n := range []int{1, 2, 3, 4, 7} {
			seen := map[Unit]int{}
			var loads []time.Duration
			for i := range n {
				units := spec.ShardUnits(Shard{i, n}, mockCfg)
				if again := spec.ShardUnits(Shard{i, n}, mockCfg); !slices.Equal(units, again) {
					t.Fatalf("%s %d/%d: two computations differ", file, i, n)
				}
				var load time.Duration
				for k, u := range units {
					seen[u]++
					load += cost(u)
					if k > 0 && pos[units[k-1]] > pos[u] {
						t.Errorf("%s %d/%d: %v before %v, not one machine's order", file, i, n, units[k-1], u)
					}
				}
				loads = append(loads, load)
			}
			if len(seen) != len(all) {
				t.Errorf("%s in %d shards: %d of %d units", file, n, len(seen), len(all))
			}
			for u, k := range seen {
				if k != 1 {
					t.Errorf("%s in %d shards: %v in %d shards", file, n, u, k)
				}
			}
			if spread := slices.Max(loads) - slices.Min(loads); spread > longest {
				t.Errorf("%s in %d shards: expected times %v differ by %v, more than the longest run's %v", file, n, loads, spread, longest)
			}
		}
	}
}

// splitResults cuts complete results into the n partial results their
// shards would have written (the same runs, each in its shard).
func splitResults(t *testing.T, res *Results, n int) []Part {
	t.Helper()
	mockCfg := config.Default()
	mockCfg.Seed, mockCfg.TimeScale = res.Experiment.Seed, res.Experiment.TimeScale
	byUnit := map[Unit]RunRecord{}
	for _, run := range res.Runs {
		byUnit[Unit{run.Cell, run.Run}] = run
	}
	var parts []Part
	for i := range n {
		p := *res
		p.Environment.BinarySHA256 = "0123456789abcdef"
		p.Environment.Hostname = fmt.Sprintf("node-%d", i)
		units := res.Experiment.ShardUnits(Shard{i, n}, mockCfg)
		p.Shard = &ShardRecord{Shard: Shard{i, n}, Units: units}
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

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Merging the shards of committed results gives back exactly the runs,
// cells and verdicts one machine wrote, whatever the number of shards and
// the order they are given in.
func TestMergeGivesWhatOneMachineWrote(t *testing.T) {
	// Not parallel, for the same reason (CPU-heavy under -race).
	for _, dir := range []string{"results/conditions-v1", "results/replication-v2"} {
		res, err := ReadResults(dir + "/results.json")
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
			if asJSON(t, merged.Runs) != asJSON(t, res.Runs) {
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
	res, err := ReadResults("results/conditions-v1/results.json")
	if err != nil {
		t.Fatal(err)
	}
	mockCfg := config.Default()
	mockCfg.Seed, mockCfg.TimeScale = res.Experiment.Seed, res.Experiment.TimeScale
	edit := func(i int, f func(*Results)) []Part {
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
		{"not a shard", edit(1, func(r *Results) { r.Shard = nil }), "shard-1 is not a shard's partial results"},
		{"other split", append(splitResults(t, res, 2)[:1], splitResults(t, res, 3)[1:]...), "different splits: 2 shards vs 3 shards"},
		{"experiment file", edit(2, func(r *Results) { r.ExperimentSHA256 = "ffff" }), "different experiment files"},
		{"design", edit(2, func(r *Results) { r.Experiment.Runs = 5 }), "different designs: runs: 3 vs 5"},
		{"hypotheses", edit(1, func(r *Results) { r.HypothesesSHA256 = "eeee" }), "different hypotheses"},
		{"binary", edit(1, func(r *Results) { r.Environment.BinarySHA256 = "dddd" }), "different binaries"},
		{"interrupted", edit(2, func(r *Results) { r.Partial = "interrupted after 3 of 12 runs" }), "shard-2 (shard 2/3) is incomplete: interrupted after 3 of 12 runs"},
		{"a run short", edit(0, func(r *Results) { r.Runs = r.Runs[1:] }), "shard-0: shard 0/3 holds 11 runs, not its 12 units in order"},
		{"other units", edit(0, func(r *Results) { r.Shard.Units = r.Shard.Units[1:] }), "lists other units than the split gives"},
		{"calibration", edit(1, func(r *Results) { c := *r.Calibration; c.MaxBias = 0.5; r.Calibration = &c }), "took the time-scale calibration differently: MaxBias: 0.02 vs 0.5"},
		{"uncalibrated", edit(1, func(r *Results) { r.Calibration = &Calibration{Skipped: "turned off"} }), "took the time-scale calibration differently: "},
		{"index", edit(2, func(r *Results) { r.Shard.Index = 5 }), "says it is shard 5/3"},
	} {
		_, err := Merge(tt.parts, mockCfg)
		if !errors.Is(err, ErrMerge) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an ErrMerge saying %q", tt.name, err, tt.want)
		}
	}
}

// The tiny matrix run as two shards and whole, side by side, by three
// runners against three instances of one mock service (mockservice
// --instances, as the Kubernetes Deployment serves the Indexed Job's
// pods): the shards merge into the same runs (cell, run, seed), cells and
// verdicts as the whole run.
func TestShardedRunMergesLikeOneMachine(t *testing.T) {
	// Not parallel: three matrices of child runs at once.
	bin := buildLoadlab(t)
	dir := t.TempDir()
	spec, err := LoadSpec(writeFile(t, dir, "spec.yaml", tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	hpath := writeFile(t, dir, "h.yaml", "rules: paired-v2\n"+tinyHypotheses)
	hs, err := LoadHypotheses(hpath, spec)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := Preregister(hpath, spec, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := config.Default()
	cfg.Seed, cfg.TimeScale = spec.Seed, spec.TimeScale
	instances := mocktest.StartInstances(t, cfg, 3)
	results := make([]*Results, 3)
	var wg sync.WaitGroup
	for k, sh := range []*Shard{{0, 2}, {1, 2}, nil} {
		wg.Go(func() {
			r := &Runner{Spec: spec, Hypotheses: hs, Binary: bin, Target: instances[k].URL, MockConfig: &cfg, Lock: lock, Shard: sh}
			res, err := r.Run(ctx)
			if err != nil {
				t.Errorf("instance %d: %v", k, err)
				return
			}
			res.ExperimentSHA256, res.HypothesesSHA256 = "spec", lock.SHA256
			results[k] = res
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	whole := results[2]
	var parts []Part
	total := 0
	for i, res := range results[:2] {
		if res.Shard == nil || res.Shard.Index != i || len(res.Runs) != len(res.Shard.Units) {
			t.Fatalf("shard %d: %+v, %d runs", i, res.Shard, len(res.Runs))
		}
		total += len(res.Runs)
		parts = append(parts, Part{Source: fmt.Sprintf("shard %d", i), Results: res})
	}
	if total != 6 {
		t.Errorf("the shards ran %d runs, the matrix has 6", total)
	}
	mockCfg := config.Default()
	mockCfg.Seed, mockCfg.TimeScale = spec.Seed, spec.TimeScale
	merged, err := Merge(parts, mockCfg)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		Unit
		Seed uint32
	}
	keys := func(r *Results) (out []key) {
		for _, run := range r.Runs {
			if !run.Valid() {
				t.Errorf("%s run %d: %s: %s", run.Cell, run.Run, run.Status, run.Reason)
			}
			out = append(out, key{Unit{run.Cell, run.Run}, run.Seed})
		}
		return out
	}
	if a, b := keys(merged), keys(whole); !slices.Equal(a, b) {
		t.Errorf("merged runs %v, one machine's %v", a, b)
	}
	if len(merged.Cells) != len(whole.Cells) {
		t.Fatalf("%d cells merged, %d on one machine", len(merged.Cells), len(whole.Cells))
	}
	for i := range merged.Cells {
		if m, w := merged.Cells[i], whole.Cells[i]; m.Cell != w.Cell || m.Runs != w.Runs || m.Valid != w.Valid {
			t.Errorf("cell %d: merged %v %d/%d runs, one machine %v %d/%d", i, m.Cell, m.Valid, m.Runs, w.Cell, w.Valid, w.Runs)
		}
	}
	if len(merged.Verdicts) != len(hs) || len(whole.Verdicts) != len(hs) {
		t.Fatalf("%d verdicts merged, %d on one machine, %d hypotheses", len(merged.Verdicts), len(whole.Verdicts), len(hs))
	}
	if a, b := asJSON(t, merged.Calibration), asJSON(t, whole.Calibration); a != b {
		t.Errorf("calibration merged %s, one machine %s", a, b)
	}
	for i, v := range merged.Verdicts {
		if w := whole.Verdicts[i]; v.ID != w.ID || v.Verdict != w.Verdict || v.Verdict != Supported {
			t.Errorf("%s: merged %s, one machine %s %s", v.ID, v.Verdict, w.ID, w.Verdict)
		}
	}
}
