package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
	"github.com/loadlab/loadlab/mockservice/testkit"
)

// The tiny matrix run as two shards and whole, side by side, by three
// runners against three instances of one mock service (mockservice
// --instances, as the Kubernetes Deployment serves the Indexed Job's
// pods): the shards merge into the same runs (cell, run, seed), cells and
// verdicts as the whole run.
func TestShardedRunMergesLikeOneMachine(t *testing.T) {
	// Not parallel: three matrices of child runs at once.
	bin := exptest.BuildLoadlab(t)
	dir := t.TempDir()
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	hpath := exptest.WriteFile(t, dir, "h.yaml", "rules: paired-v2\n"+exptest.TinyHypotheses)
	hs, err := design.LoadHypotheses(hpath, spec)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := design.Preregister(hpath, spec, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := config.Default()
	cfg.Seed, cfg.TimeScale = spec.Seed, spec.TimeScale
	instances := mocktest.Start(t, mocktest.Options{Config: cfg, Instances: 3}).Instances
	results := make([]*resultsfile.Results, 3)
	var wg sync.WaitGroup
	for k, sh := range []*plan.Shard{{Index: 0, Count: 2}, {Index: 1, Count: 2}, nil} {
		wg.Go(func() {
			r, err := New(Config{Spec: spec, Hypotheses: hs, Binary: bin, Target: instances[k].URL, MockConfig: cfg, Lock: lock, Shard: sh}, nil)
			if err != nil {
				t.Errorf("instance %d: %v", k, err)
				return
			}
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
	var parts []judge.Part
	total := 0
	for i, res := range results[:2] {
		if res.Shard == nil || res.Shard.Index != i || len(res.Runs) != len(res.Shard.Units) {
			t.Fatalf("shard %d: %+v, %d runs", i, res.Shard, len(res.Runs))
		}
		total += len(res.Runs)
		parts = append(parts, judge.Part{Source: fmt.Sprintf("shard %d", i), Results: res})
	}
	if total != 6 {
		t.Errorf("the shards ran %d runs, the matrix has 6", total)
	}
	mockCfg := config.Default()
	mockCfg.Seed, mockCfg.TimeScale = spec.Seed, spec.TimeScale
	merged, err := judge.Merge(parts, mockCfg)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		plan.Unit
		Seed uint32
	}
	keys := func(r *resultsfile.Results) (out []key) {
		for _, run := range r.Runs {
			if !run.Valid() {
				t.Errorf("%s run %d: %s: %s", run.Cell, run.Run, run.Status, run.Reason)
			}
			out = append(out, key{plan.Unit{Cell: run.Cell, Run: run.Run}, run.Seed})
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
	if a, b := testkit.JSON(t, merged.Calibration), testkit.JSON(t, whole.Calibration); a != b {
		t.Errorf("calibration merged %s, one machine %s", a, b)
	}
	for i, v := range merged.Verdicts {
		if w := whole.Verdicts[i]; v.ID != w.ID || v.Verdict != w.Verdict || v.Verdict != resultsfile.Supported {
			t.Errorf("%s: merged %s, one machine %s %s", v.ID, v.Verdict, w.ID, w.Verdict)
		}
	}
}
