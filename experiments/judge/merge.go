package judge

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
)

// Part is one shard's results and where they were read from.
type Part struct {
	Source  string
	Results *resultsfile.Results
}

// ErrMerge: partial results that cannot be merged; nothing is written.
var ErrMerge = errors.New("merge")

// ErrNotShard: results that are not one shard's part of a matrix.
var ErrNotShard = errors.New("not a shard's partial results")

// Merge combines the n shards of one matrix into the results one machine
// running it would have written: the same runs (each with its seed) in the
// same order, and cells and verdicts computed from them as the runner
// computes them (mockCfg as for loadlab check). It refuses, naming them,
// partials that are not shards, shards of different splits, experiment
// files, designs, hypotheses or binaries, a shard given twice or missing,
// an interrupted shard, and a shard whose runs are not its part of the
// matrix. The calibration kept is the shard's with the largest bias (the
// verdicts are gated by the worst machine); each shard's is in Shards.
func Merge(parts []Part, mockCfg config.Config) (*resultsfile.Results, error) {
	byIndex, err := shardsOf(parts)
	if err != nil {
		return nil, err
	}
	n := len(byIndex)
	for i := range n {
		if d := calibrationDifference(byIndex[0].Results.Calibration, byIndex[i].Results.Calibration); d != "" {
			return nil, fmt.Errorf("%w: %s and %s took the time-scale calibration differently: %s", ErrMerge, byIndex[0].Source, byIndex[i].Source, d)
		}
	}
	spec := byIndex[0].Results.Experiment
	merged := *byIndex[0].Results
	merged.Shard, merged.Runs, merged.Shards, merged.Calibration, merged.Attempts = nil, nil, nil, nil, nil
	split := plan.Split(spec, n, mockCfg)
	for i := range n {
		p := byIndex[i]
		if err := holdsItsUnits(p, split[i]); err != nil {
			return nil, err
		}
		r := p.Results
		merged.Runs = append(merged.Runs, r.Runs...)
		merged.Shards = append(merged.Shards, resultsfile.MergedShard{Index: i, Source: p.Source, Environment: r.Environment, Target: r.Target,
			Started: r.Started, Finished: r.Finished, Runs: len(r.Runs), Calibration: r.Calibration, Attempts: r.Attempts})
		if r.Started.Before(merged.Started) {
			merged.Started = r.Started
		}
		if r.Finished.After(merged.Finished) {
			merged.Finished = r.Finished
		}
	}
	merged.Calibration = gatingCalibration(byIndex)
	merged.TimeScaleBias = mergedBias(byIndex, merged.Runs)
	order := map[plan.Unit]int{}
	for i, u := range plan.Units(spec) {
		order[u] = i
	}
	slices.SortStableFunc(merged.Runs, func(a, b resultsfile.RunRecord) int {
		return order[plan.Unit{Cell: a.Cell, Run: a.Run}] - order[plan.Unit{Cell: b.Cell, Run: b.Run}]
	})
	merged.Cells = Summaries(spec, merged.Runs, mockCfg, merged.Advised)
	merged.Verdicts = Rejudge(&merged)
	return &merged, nil
}

// shardsOf checks that the parts are the shards of one matrix — the same
// split, experiment file, design, hypotheses, binary and advice, each
// complete, each once, none missing — and returns them by index.
func shardsOf(parts []Part) ([]Part, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no partial results", ErrMerge)
	}
	first := parts[0]
	byIndex := map[int]Part{}
	for _, p := range parts {
		r := p.Results
		if r.Shard == nil {
			return nil, fmt.Errorf("%w: %s is %w: it names no shard of the matrix", ErrMerge, p.Source, ErrNotShard)
		}
		if r.Partial != "" {
			return nil, fmt.Errorf("%w: %s (shard %s) is incomplete: %s", ErrMerge, p.Source, r.Shard.Shard, r.Partial)
		}
		if err := sameMatrix(first, p); err != nil {
			return nil, err
		}
		if r.Shard.Index < 0 || r.Shard.Index >= r.Shard.Count {
			return nil, fmt.Errorf("%w: %s says it is shard %s", ErrMerge, p.Source, r.Shard.Shard)
		}
		if q, dup := byIndex[r.Shard.Index]; dup {
			return nil, fmt.Errorf("%w: shard %s given twice: %s and %s", ErrMerge, r.Shard.Shard, q.Source, p.Source)
		}
		byIndex[r.Shard.Index] = p
	}
	n := first.Results.Shard.Count
	var missing []string
	out := make([]Part, n)
	for i := range n {
		p, ok := byIndex[i]
		if !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
		out[i] = p
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: missing shard(s) %s", ErrMerge, strings.Join(missing, ", "))
	}
	return out, nil
}

// sameMatrix says how part p is not of the same matrix as first, if it is
// not: another split, experiment file, design, hypotheses, binary or
// advice, or a binary it does not name.
func sameMatrix(first, p Part) error {
	f, r := first.Results, p.Results
	differ := func(what, a, b string) error {
		if a == b {
			return nil
		}
		return fmt.Errorf("%w: %s and %s are from different %s: %s vs %s", ErrMerge, first.Source, p.Source, what, abbrev(a), abbrev(b))
	}
	design := func() error {
		if diff := firstDifference(f.Experiment, r.Experiment); diff != "" {
			return fmt.Errorf("%w: %s and %s are of different designs: %s", ErrMerge, first.Source, p.Source, diff)
		}
		return nil
	}
	if err := cmp.Or(differ("splits", shardCount(f.Shard), shardCount(r.Shard)),
		differ("experiment files (SHA-256)", f.ExperimentSHA256, r.ExperimentSHA256), design(),
		differ("hypotheses (SHA-256)", f.HypothesesSHA256, r.HypothesesSHA256),
		differ("binaries (SHA-256)", f.Environment.BinarySHA256, r.Environment.BinarySHA256),
		differ("advised strategies", jsonString(f.Advised), jsonString(r.Advised))); err != nil {
		return err
	}
	if r.Environment.BinarySHA256 == "" {
		return fmt.Errorf("%w: %s does not say which binary ran it", ErrMerge, p.Source)
	}
	return nil
}

// holdsItsUnits says how shard p's runs are not its units of the split,
// in order, if they are not.
func holdsItsUnits(p Part, want []plan.Unit) error {
	r := p.Results
	if !slices.Equal(want, r.Shard.Units) {
		return fmt.Errorf("%w: %s: shard %s lists other units than the split gives (%d listed, %d expected)", ErrMerge, p.Source, r.Shard.Shard, len(r.Shard.Units), len(want))
	}
	var ran []plan.Unit
	for _, run := range r.Runs {
		ran = append(ran, plan.Unit{Cell: run.Cell, Run: run.Run})
	}
	if !slices.Equal(ran, want) {
		return fmt.Errorf("%w: %s: shard %s holds %d runs, not its %d units in order", ErrMerge, p.Source, r.Shard.Shard, len(ran), len(want))
	}
	return nil
}

// gatingCalibration is the calibration that gates the merged verdicts:
// the first shard's beyond its limit and not accepted, else the one with
// the largest bias, else (none measured) shard 0's.
func gatingCalibration(shards []Part) *resultsfile.Calibration {
	for _, p := range shards {
		if c := p.Results.Calibration; c.Exceeded() != "" && !c.Accepted {
			return c
		}
	}
	worst, cal := -1.0, shards[0].Results.Calibration
	for i, p := range shards {
		if b := largestBias(p.Results.Calibration); b > worst || i == 0 {
			worst, cal = b, p.Results.Calibration
		}
	}
	return cal
}

// mergedBias is the shards' cell-by-cell calibrations as one: the same
// plan, every shard's twins, the biases measured again over all the runs,
// incomplete when any shard's was (nil for shards that kept none).
func mergedBias(shards []Part, runs []resultsfile.RunRecord) *resultsfile.Bias {
	first := shards[0].Results.TimeScaleBias
	if first == nil {
		return nil
	}
	b := *first
	b.Twins, b.Incomplete = nil, ""
	var incomplete []string
	for _, p := range shards {
		sb := p.Results.TimeScaleBias
		if sb == nil {
			continue
		}
		b.Twins = append(b.Twins, sb.Twins...)
		if sb.Incomplete != "" {
			incomplete = append(incomplete, fmt.Sprintf("shard %s: %s", p.Results.Shard.Shard, sb.Incomplete))
		}
	}
	b.Incomplete = strings.Join(incomplete, "; ")
	b.Measured = MeasureBias(&b, runs)
	return &b
}

// calibrationDifference names how two shards' calibrations were taken
// differently (measured or not, limit, acceptance, rounds, strategies), or
// "" when alike.
func calibrationDifference(a, b *resultsfile.Calibration) string {
	type how struct {
		Measured bool
		MaxBias  float64
		Accepted bool
		Runs     int
		CPU      string
		Names    []string
	}
	of := func(c *resultsfile.Calibration) how {
		if c == nil {
			return how{}
		}
		h := how{Measured: c.Skipped == "", MaxBias: c.MaxBias, Accepted: c.Accepted, Runs: c.Runs, CPU: c.CPU}
		for _, s := range c.Strategies {
			h.Names = append(h.Names, s.Strategy)
		}
		return h
	}
	return firstDifference(of(a), of(b))
}

// largestBias is the calibration's largest bias in size: -1 when it
// measured none, +Inf when a strategy went unmeasured (which counts as
// beyond the limit).
func largestBias(c *resultsfile.Calibration) float64 {
	if c == nil || c.Skipped != "" {
		return -1
	}
	worst := 0.0
	for _, s := range c.Strategies {
		if s.Unmeasured {
			return 1e308
		}
		worst = max(worst, s.Bias, -s.Bias)
	}
	return worst
}

// firstDifference names the first top-level field in which a and b differ
// once written as JSON ("runs: 3 vs 5"), or "" when they do not.
func firstDifference(a, b any) string {
	var x, y map[string]any
	if json.Unmarshal([]byte(jsonString(a)), &x) != nil || json.Unmarshal([]byte(jsonString(b)), &y) != nil {
		return ""
	}
	keys := slices.Sorted(maps.Keys(x))
	for k := range y {
		if _, ok := x[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if !reflect.DeepEqual(x[k], y[k]) {
			return fmt.Sprintf("%s: %s vs %s", k, abbrev(jsonString(x[k])), abbrev(jsonString(y[k])))
		}
	}
	return ""
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// abbrev shortens a long figure for an error message.
func abbrev(s string) string {
	if len(s) > 24 {
		return s[:12] + "…"
	}
	if s == "" {
		return "(none)"
	}
	return s
}

// shardCount is a split's size, as a merge error names it.
func shardCount(s *plan.ShardRecord) string { return fmt.Sprintf("%d shards", s.Count) }
