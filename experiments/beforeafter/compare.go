// Package beforeafter judges a change against the noise: two sets of runs
// of one workload, before and after a change (a configuration, a
// dependency, a client version), compared metric by metric and cell by
// cell. Each comparison gives the medians, the ratio after/before (or
// the difference, where a value is 0) with a distribution-free interval,
// a two-sided rank test — paired by seed (Wilcoxon signed-rank) when both
// sides ran the same seeds and there are pairs enough, else unpaired
// (Mann–Whitney); exact up to ExactLimit values, beyond by the normal
// approximation with a continuity correction — and a decision: better,
// worse, no change or not enough runs. A change is called only when its
// Holm-adjusted p is at most alpha over every comparison made and it
// moves the metric by at least the minimum effect. It is pure: it reads
// and writes nothing.
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
		return fmt.Errorf("--min-effect: %v must be at least 0 and below 10 (0%% to under 1000%%; 0.05 is 5%%)", o.MinEffect)
	}
	return nil
}

// ErrMismatch is the error of two sides that cannot be compared.
var ErrMismatch = errors.New("the two sides do not match")

// TooFewRuns is the error of a comparison whose values cannot reach the
// level: the first such, its cell and metric (none: a cell without a
// value of any metric compared), its values a side (of Runs runs a side),
// the runs a side the level needs, and how many comparisons fell short.
type TooFewRuns struct {
	Cell, Metric          string
	Before, After         int
	RunsBefore, RunsAfter int
	Needed                int
	Comparisons, Short    int
	Cells                 int
	Alpha, LeastP         float64
}

func (e *TooFewRuns) Error() string {
	what, counts := e.Cell, fmt.Sprintf("%d run%s before and %d after", e.Before, plural(e.Before), e.After)
	if e.Metric != "" {
		what += " " + e.Metric
	}
	if e.Before != e.RunsBefore || e.After != e.RunsAfter {
		counts = fmt.Sprintf("%d runs before and %d after have a value (of %d and %d)", e.Before, e.After, e.RunsBefore, e.RunsAfter)
	}
	others := ""
	if e.Short > 1 {
		others = fmt.Sprintf(" (%d of the %d comparisons fall short)", e.Short, e.Comparisons)
	}
	fewer := "compare fewer metrics (--metric)"
	if e.Cells > 1 {
		fewer = "compare fewer metrics (--metric) or cells (--cell)"
	}
	return fmt.Sprintf("%s: %s; at --alpha %g over %d comparisons (Holm) a change can be called only with "+
		"a p of at most %.3g, and the two-sided rank test needs at least %d runs on each side for that (with %d and %d its smallest p is %.3g)%s; "+
		"run more, or %s", what, counts, e.Alpha, e.Comparisons, e.Alpha/float64(max(1, e.Comparisons)),
		e.Needed, e.Before, e.After, e.LeastP, others, fewer)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Compare compares after with before under o. The report holds a row per
// cell and metric that both sides have; the error is ErrMismatch's (kinds
// or cells that differ, a metric named that a side lacks) or a
// *TooFewRuns — any comparison, or any cell, with too few values a side
// for the level — returned with the report filled in as far as it goes
// (nothing tested).
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
		if r.Decision == "" || r.Decision == NotEnough {
			rep.Comparisons++
		}
	}
	level := o.Alpha / float64(max(1, rep.Comparisons))
	rep.RunsNeeded, rep.PairsNeeded = RunsNeeded(level), PairsNeeded(level)
	if err := rep.enoughRuns(before, after, level); err != nil {
		return rep, err
	}
	if rep.Comparisons == 0 {
		rep.RunsNeeded, rep.PairsNeeded = 0, 0
		return rep, nil
	}
	rep.test(level)
	return rep, nil
}

// enoughRuns refuses a comparison whose values cannot reach level on
// either test, or a cell with fewer than 2 runs a side (whose values,
// all equal, may have left it no comparison), marking every row left
// open not enough runs.
func (r *Report) enoughRuns(before, after Side, level float64) error {
	var first *TooFewRuns
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Decision != "" && row.Decision != NotEnough || row.reaches(level) {
			continue
		}
		row.Decision = NotEnough
		row.Note = fmt.Sprintf("%d value%s before and %d after: at least %d a side are needed for a p of %.3g",
			len(row.before), plural(len(row.before)), len(row.after), r.RunsNeeded, level)
		if first == nil {
			b, a := before.cell(row.Cell), after.cell(row.Cell)
			first = &TooFewRuns{Cell: row.Cell, Metric: row.Metric.Name, Before: len(row.before), After: len(row.after),
				RunsBefore: len(b.Runs), RunsAfter: len(a.Runs), LeastP: LeastUnpaired(len(row.before), len(row.after))}
		}
		first.Short++
	}
	for _, c := range before.Cells {
		a := after.cell(c.Name)
		if first != nil || min(len(c.Runs), len(a.Runs)) >= 2 {
			continue
		}
		first = &TooFewRuns{Cell: c.Name, Before: len(c.Runs), After: len(a.Runs), RunsBefore: len(c.Runs), RunsAfter: len(a.Runs),
			LeastP: LeastUnpaired(len(c.Runs), len(a.Runs)), Short: 1}
	}
	if first == nil {
		return nil
	}
	for i := range r.Rows {
		if r.Rows[i].Decision == "" {
			r.Rows[i].Decision, r.Rows[i].Note = NotEnough, "not judged: other comparisons have too few runs"
		}
	}
	first.Needed, first.Comparisons, first.Cells, first.Alpha = r.RunsNeeded, r.Comparisons, len(before.Cells), r.Alpha
	return first
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
