// Package plan says what an experiment runs, in what order, and how long
// each run should take: the matrix as units (one run of one cell) in one
// machine's order, each run's seed, the split of the units into shards for
// several machines, and each cell's Little's-law bound from the mock
// service's configuration. Pure: it runs nothing.
package plan

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/loadlab/loadlab/client/split"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/field"
)

// Shard is one of Count parts of a matrix, numbered from 0 like a
// Kubernetes Indexed Job's JOB_COMPLETION_INDEX.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// MaxShards bounds a split.
const MaxShards = split.Max

// ParseShard reads "i/n": part i of n, 0 ≤ i < n.
func ParseShard(s string) (Shard, error) {
	i, n, err := split.Parse(s, "shard")
	if err != nil {
		return Shard{}, err
	}
	return Shard{Index: i, Count: n}, nil
}

// Unit is one run of one cell: what a shard is made of.
type Unit struct {
	Cell design.Cell `json:"cell"`
	Run  int         `json:"run"`
}

// Units lists the whole matrix in the order one machine runs it: run 1 of
// every cell, then run 2, and so on.
func Units(s design.Spec) []Unit {
	var out []Unit
	for run := 1; run <= s.Runs; run++ {
		for _, c := range s.Cells() {
			out = append(out, Unit{Cell: c, Run: run})
		}
	}
	return out
}

// runOverhead is what every run costs besides its lab time, for balancing
// shards only: the child's start, the waits for quiet, the scrape.
const runOverhead = 2 * time.Second

// ShardUnits is shard sh's part of the matrix: every run of every cell
// goes to exactly one shard, balanced by expected duration (its lab time
// at the time scale, from the duration of a time-bounded run or the
// cell's Little's-law bound, plus runOverhead): longest first, each to
// the shard with the least so far, ties to the lower index. The split
// depends on the design and the mock configuration alone, so every shard
// computes the same one; run k keeps its seed (RunSeed) whichever shard
// runs it. The units come in the order one machine would run them.
func ShardUnits(s design.Spec, sh Shard, mockCfg config.Config) []Unit {
	return Split(s, sh.Count, mockCfg)[sh.Index]
}

// Split is every shard's part of the matrix, by index (see ShardUnits).
func Split(s design.Spec, count int, mockCfg config.Config) [][]Unit {
	all := Units(s)
	byCell := map[design.Cell]time.Duration{}
	for _, c := range s.Cells() {
		byCell[c] = unitCost(s, mockCfg, c)
	}
	cost := make([]time.Duration, len(all))
	for i, u := range all {
		cost[i] = byCell[u.Cell]
	}
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost[b], cost[a]) })
	load := make([]time.Duration, count)
	owner := make([]int, len(all))
	for _, i := range order {
		least := 0
		for k := range load {
			if load[k] < load[least] {
				least = k
			}
		}
		owner[i] = least
		load[least] += cost[i]
	}
	out := make([][]Unit, count)
	for i, u := range all {
		out[owner[i]] = append(out[owner[i]], u)
	}
	return out
}

// unitCost is what one run of cell c is expected to take, for balancing.
func unitCost(s design.Spec, mockCfg config.Config, c design.Cell) time.Duration {
	return runOverhead + time.Duration(ExpectedLabSeconds(s, mockCfg, c, nil)*s.ScaleOf(c)*float64(time.Second))
}

// ErrShard: a matrix that cannot be split as asked.
var ErrShard = errors.New("the matrix cannot be split")

// CheckShardable says why the matrix cannot be split into shards, if it
// cannot: advised cells whose advice comes from probes would be advised
// by each shard's own probes, on its own machine, and the merged cells
// would mix strategies (an advise.file gives every shard the same one).
func CheckShardable(s design.Spec, sh Shard) error {
	if sh.Count <= 1 {
		return nil
	}
	for _, c := range s.Cells() {
		if c.Strategy == design.Advised && (s.Advise == nil || s.Advise.File == "") {
			return &field.Error{Field: "shard", Err: fmt.Errorf("%s: %w: the advised cells (%s) take their strategy from probes each shard would run on its own machine; give the experiment file's advise.file, or run it on one machine", sh, ErrShard, c)}
		}
	}
	return nil
}

// ShardRecord says which part of the matrix a partial result holds: the
// shard and its units, in the order they ran.
type ShardRecord struct {
	Shard
	Units []Unit `json:"units"`
}

// RunSeed is the mock service's seed for run k of every cell: the
// experiment's seed + k.
func RunSeed(spec design.Spec, run int) uint32 { return uint32(spec.Seed) + uint32(run) }
