package beforeafter

import (
	"math"
	"slices"
)

// Decision is what a comparison found.
type Decision string

const (
	Better    Decision = "better"
	Worse     Decision = "worse"
	NoChange  Decision = "no change"
	NotEnough Decision = "not enough runs"
)

// Test names.
const (
	Paired   = "paired by seed (Wilcoxon signed-rank)"
	Unpaired = "unpaired (Mann–Whitney)"
)

// Scales of an estimate: the ratio after/before (the test on the logs of
// the values), or the difference after − before in the metric's unit
// where a value is 0 or below.
const (
	Ratio      = "ratio"
	Difference = "difference"
)

// Summary is one side's values of a metric in a cell.
type Summary struct {
	Runs   int     `json:"runs"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Row is one metric compared in one cell. Normal says the test or the
// interval was the normal approximation (beyond ExactLimit values), not
// exact. Estimate, Lo and Hi are a ratio or a difference (Scale);
// Coverage is the interval's coverage (exact, or as approximated);
// Change the relative change (nil from a median of 0); P the test's
// two-sided p and HolmP Holm's adjusted p, over Report.Comparisons.
type Row struct {
	Cell     string   `json:"cell"`
	Metric   Metric   `json:"metric"`
	Before   Summary  `json:"before"`
	After    Summary  `json:"after"`
	Test     string   `json:"test,omitempty"`
	Pairs    int      `json:"pairs,omitempty"`
	Normal   bool     `json:"normal_approximation,omitempty"`
	Scale    string   `json:"scale,omitempty"`
	Estimate *float64 `json:"estimate,omitempty"`
	Lo       *float64 `json:"lo,omitempty"`
	Hi       *float64 `json:"hi,omitempty"`
	Coverage *float64 `json:"coverage,omitempty"`
	Change   *float64 `json:"change,omitempty"`
	P        *float64 `json:"p,omitempty"`
	HolmP    *float64 `json:"holm_p,omitempty"`
	Decision Decision `json:"decision"`
	Note     string   `json:"note,omitempty"`

	before, after []float64
	pairedDiffs   func(logs bool) []float64
}

// Report is a comparison: its settings, how many comparisons Holm's
// correction counted (those with values that vary), the runs (and pairs)
// a side needs for a change to be callable over them, and the rows.
type Report struct {
	Alpha       float64 `json:"alpha"`
	MinEffect   float64 `json:"min_effect"`
	Level       float64 `json:"interval_level"`
	Comparisons int     `json:"comparisons"`
	RunsNeeded  int     `json:"runs_needed,omitempty"`
	PairsNeeded int     `json:"pairs_needed,omitempty"`
	Rows        []Row   `json:"rows"`
}

// Worse is the rows called worse: the regressions.
func (r Report) Worse() []Row {
	var out []Row
	for _, row := range r.Rows {
		if row.Decision == Worse {
			out = append(out, row)
		}
	}
	return out
}

// rows is a row per cell and metric some run of the cell has, the
// untestable ones decided: nothing that varies (not counted), or fewer
// than 2 values a side (counted, and refused by enoughRuns).
func rows(before, after Side, metrics []Metric) []Row {
	var out []Row
	for _, c := range before.Cells {
		a := after.cell(c.Name)
		for _, m := range metrics {
			row := Row{Cell: c.Name, Metric: m, before: values(c, m.Name), after: values(a, m.Name)}
			if len(row.before)+len(row.after) == 0 {
				continue
			}
			row.Before, row.After = summarize(row.before), summarize(row.after)
			row.pairedDiffs = func(logs bool) []float64 { return pairedDiffs(c, a, m.Name, logs) }
			switch {
			case len(row.before) > 0 && len(row.after) > 0 && allEqual(row.before, row.after):
				row.Decision, row.Note = NoChange, "every value is the same: nothing varies, not counted among the comparisons"
			case len(row.before) < 2 || len(row.after) < 2:
				row.Decision = NotEnough
			}
			out = append(out, row)
		}
	}
	return out
}

// values are the cell's finite values of metric, run by run.
func values(c Cell, metric string) []float64 {
	var out []float64
	for _, r := range c.Runs {
		if v, ok := r.Values[metric]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

// pairedDiffs are after − before of metric for each seed both cells ran
// (of the logs, when logs), when the cells pair by seed; nil otherwise.
func pairedDiffs(before, after Cell, metric string, logs bool) []float64 {
	seeds, ok := pairing(before, after)
	if !ok {
		return nil
	}
	at := func(c Cell, seed uint32) (float64, bool) {
		for _, r := range c.Runs {
			if r.Seed == seed {
				v, ok := r.Values[metric]
				return v, ok && !math.IsNaN(v) && !math.IsInf(v, 0)
			}
		}
		return 0, false
	}
	var d []float64
	for _, s := range seeds {
		b, okB := at(before, s)
		a, okA := at(after, s)
		if !okB || !okA {
			continue
		}
		if logs {
			a, b = math.Log(a), math.Log(b)
		}
		d = append(d, a-b)
	}
	return d
}

func summarize(vals []float64) Summary {
	if len(vals) == 0 {
		return Summary{}
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	return Summary{Runs: len(s), Median: median(s), Min: s[0], Max: s[len(s)-1]}
}

func allEqual(a, b []float64) bool {
	for _, v := range append(slices.Clone(a), b...) {
		if v != a[0] {
			return false
		}
	}
	return true
}

func positive(vals ...[]float64) bool {
	for _, vs := range vals {
		for _, v := range vs {
			if v <= 0 {
				return false
			}
		}
	}
	return true
}

func ptr(v float64) *float64 { return &v }
