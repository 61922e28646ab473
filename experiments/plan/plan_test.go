package plan

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/mockservice/config"
)

func TestCellBound(t *testing.T) {
	cfg := config.Default()
	c4, _ := strategy.Parse("C4")
	b := CellBound(cfg, config.ProfileSlowWrite, c4, 32, 2*time.Second)
	if math.Abs(b.WriteCapacity-40) > 1e-9 || b.Limit != "writes" {
		t.Errorf("slow-write C4: %+v; want the 6 write permits / 150 ms = 40/s to bind", b)
	}
	b = CellBound(cfg, config.ProfileHealthy, c4, 32, 2*time.Second)
	// 24 permits / (3 × the log-normal mean, 120 ms × e^(0.3²/2) ≈ 125.5 ms).
	want := 24 / (3 * 0.120 * math.Exp(0.045))
	if b.Limit != "enrichment" || math.Abs(b.Bound-want)/want > 0.02 {
		t.Errorf("healthy C4: %+v; want enrichment bound ≈ %.1f", b, want)
	}
}

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
		{"$(JOB_COMPLETION_INDEX)/4", Shard{}, "is not i/n with whole numbers"},
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
	for _, file := range []string{"../replication.yaml", "../adaptive.yaml", "../conditions.yaml", "../container.yaml"} {
		spec, err := design.LoadSpec(file)
		if err != nil {
			t.Fatal(err)
		}
		mockCfg := config.Default()
		mockCfg.Seed, mockCfg.TimeScale = spec.Seed, spec.TimeScale
		all := Units(spec)
		pos := map[Unit]int{}
		for i, u := range all {
			pos[u] = i
		}
		costs := map[design.Cell]time.Duration{}
		for _, c := range spec.Cells() {
			costs[c] = unitCost(spec, mockCfg, c)
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
				units := ShardUnits(spec, Shard{i, n}, mockCfg)
				if again := ShardUnits(spec, Shard{i, n}, mockCfg); !slices.Equal(units, again) {
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
