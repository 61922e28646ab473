// Package beforeafter judges a change against the noise: two sets of runs
// of one workload, before and after a change (a configuration, a
// dependency, a client version), compared metric by metric and cell by
// cell. Each comparison gives the medians, the ratio after/before (or
// the difference, where a value is 0) with a distribution-free interval,
// a two-sided exact rank test — paired by seed (Wilcoxon signed-rank)
// when both sides ran the same seeds and there are pairs enough, else
// unpaired (Mann–Whitney) — and a decision: better, worse, no change or
// not enough runs. A change is called only when its Holm-adjusted p is
// at most alpha over every comparison made and it moves the metric by
// at least the minimum effect. It is pure: it reads and writes nothing.
package beforeafter

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Run is one run's figures, by metric name; Seed is the seed it ran on
// (HasSeed false when the run does not say).
type Run struct {
	Seed    uint32
	HasSeed bool
	Values  map[string]float64
}

// Cell is the runs of one cell of a matrix (for runs or loads outside an
// experiment, the one cell of them all).
type Cell struct {
	Name string
	Runs []Run
}

// Side is one side of a comparison: what its runs are and their cells.
type Side struct {
	Kind  Kind
	Cells []Cell
}

// Options are a comparison's settings.
type Options struct {
	// Alpha is the family-wise chance of calling any change where there
	// is none (Holm over every comparison counted).
	Alpha float64
	// MinEffect is the smallest relative change called a change: 0.05
	// is 5%.
	MinEffect float64
	// Metrics are the metrics compared; none: the kind's defaults.
	Metrics []string
}

// Defaults are alpha 0.05 and a minimum effect of 5%.
func Defaults() Options { return Options{Alpha: 0.05, MinEffect: 0.05} }

// Validate says what is wrong with o.
func (o Options) Validate() error {
	switch {
	case !(o.Alpha > 0 && o.Alpha < 1):
		return fmt.Errorf("--alpha: %v must be in (0, 1)", o.Alpha)
	case !(o.MinEffect >= 0 && o.MinEffect < 10):
		return fmt.Errorf("--min-effect: %v must be ≥ 0 (0.05 is 5%%)", o.MinEffect)
	}
	return nil
}

// ErrMismatch is the error of two sides that cannot be compared.
var ErrMismatch = errors.New("the two sides do not match")

// TooFewRuns is the error of a cell with fewer runs than the level needs.
type TooFewRuns struct {
	Cell          string
	Before, After int
	Needed        int
	Comparisons   int
	Alpha, LeastP float64
}

func (e *TooFewRuns) Error() string {
	return fmt.Sprintf("%s: %d runs before and %d after; at --alpha %g over %d comparisons (Holm) a change can be called only with "+
		"a p of at most %.3g, and the two-sided rank test needs at least %d runs on each side for that (with %d and %d its smallest p is %.3g); "+
		"run more, or compare fewer metrics (--metric)", e.Cell, e.Before, e.After, e.Alpha, e.Comparisons, e.Alpha/float64(e.Comparisons),
		e.Needed, e.Before, e.After, e.LeastP)
}

// Compare compares after with before under o. The report holds a row per
// cell and metric that both sides have; the error is ErrMismatch's (kinds
// or cells that differ, a metric named that a side lacks) or a
// *TooFewRuns, returned with the report filled in as far as it goes.
func Compare(before, after Side, o Options) (Report, error) {
	rep := Report{Alpha: o.Alpha, MinEffect: o.MinEffect, Level: 1 - o.Alpha}
	if err := o.Validate(); err != nil {
		return rep, err
	}
	if before.Kind != after.Kind {
		return rep, fmt.Errorf("%w: before holds %s, after %s", ErrMismatch, before.Kind, after.Kind)
	}
	if err := sameCells(before, after); err != nil {
		return rep, err
	}
	have := present(before, after)
	metrics, err := selectMetrics(before.Kind, o.Metrics, have)
	if err != nil {
		return rep, err
	}
	for _, m := range metrics {
		if len(o.Metrics) > 0 && !have[m.Name] {
			return rep, fmt.Errorf("%w: --metric %s: the runs of both sides do not have it", ErrMismatch, m.Name)
		}
	}
	rep.Rows = rows(before, after, metrics)
	rep.Comparisons = 0
	for _, r := range rep.Rows {
		if r.Decision == "" {
			rep.Comparisons++
		}
	}
	if rep.Comparisons == 0 {
		return rep, nil
	}
	level := o.Alpha / float64(rep.Comparisons)
	rep.RunsNeeded, rep.PairsNeeded = RunsNeeded(level), PairsNeeded(level)
	open := map[string]bool{}
	for _, r := range rep.Rows {
		open[r.Cell] = open[r.Cell] || r.Decision == ""
	}
	if err := enoughRuns(before, after, open, level, rep.Comparisons, o.Alpha); err != nil {
		for i := range rep.Rows {
			if rep.Rows[i].Decision == "" {
				rep.Rows[i].Decision = NotEnough
				rep.Rows[i].Note = fmt.Sprintf("at least %d runs a side are needed", rep.RunsNeeded)
			}
		}
		return rep, err
	}
	rep.test(before, after, level)
	return rep, nil
}

// sameCells refuses sides whose cells differ, naming those only one has.
func sameCells(before, after Side) error {
	names := func(s Side) []string {
		var out []string
		for _, c := range s.Cells {
			out = append(out, c.Name)
		}
		return out
	}
	b, a := names(before), names(after)
	var onlyB, onlyA []string
	for _, n := range b {
		if !slices.Contains(a, n) {
			onlyB = append(onlyB, n)
		}
	}
	for _, n := range a {
		if !slices.Contains(b, n) {
			onlyA = append(onlyA, n)
		}
	}
	if len(onlyB)+len(onlyA) == 0 {
		return nil
	}
	say := func(list []string) string {
		if len(list) == 0 {
			return "none"
		}
		return strings.Join(list, ", ")
	}
	return fmt.Errorf("%w: the cells differ: only before has %s; only after has %s", ErrMismatch, say(onlyB), say(onlyA))
}

// present is every metric some run of both sides has.
func present(before, after Side) map[string]bool {
	of := func(s Side) map[string]bool {
		out := map[string]bool{}
		for _, c := range s.Cells {
			for _, r := range c.Runs {
				for k := range r.Values {
					out[k] = true
				}
			}
		}
		return out
	}
	b, a := of(before), of(after)
	for k := range b {
		if !a[k] {
			delete(b, k)
		}
	}
	return b
}

// enoughRuns refuses a cell with a comparison to make (open) whose runs
// cannot reach level on either test.
func enoughRuns(before, after Side, open map[string]bool, level float64, comparisons int, alpha float64) error {
	for _, c := range before.Cells {
		if !open[c.Name] {
			continue
		}
		a := after.cell(c.Name)
		nb, na := len(c.Runs), len(a.Runs)
		pairs, paired := pairing(c, a)
		if LeastUnpaired(nb, na) <= level || paired && LeastPaired(len(pairs)) <= level {
			continue
		}
		return &TooFewRuns{Cell: c.Name, Before: nb, After: na, Needed: RunsNeeded(level), Comparisons: comparisons,
			Alpha: alpha, LeastP: LeastUnpaired(nb, na)}
	}
	return nil
}

// cell is s's cell of that name.
func (s Side) cell(name string) Cell {
	for _, c := range s.Cells {
		if c.Name == name {
			return c
		}
	}
	return Cell{Name: name}
}

// pairing is the seeds both cells ran, when each ran every seed once and
// both ran the same ones (paired true); else none.
func pairing(before, after Cell) ([]uint32, bool) {
	seeds := func(c Cell) ([]uint32, bool) {
		var out []uint32
		for _, r := range c.Runs {
			if !r.HasSeed || slices.Contains(out, r.Seed) {
				return nil, false
			}
			out = append(out, r.Seed)
		}
		slices.Sort(out)
		return out, len(out) > 0
	}
	b, okB := seeds(before)
	a, okA := seeds(after)
	if !okB || !okA || !slices.Equal(a, b) {
		return nil, false
	}
	return b, true
}
