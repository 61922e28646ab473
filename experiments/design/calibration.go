package design

import (
	"fmt"
	"math"
	"slices"

	"github.com/loadlab/loadlab/client/records"
)

// Batch gives the cells that match all of its non-empty lists (as an
// Exclude matches) Records records per run: fewer where fewer measure the
// same rate, as for C1, whose rate is fixed by the runtime's records in
// flight.
type Batch struct {
	Strategies []string `yaml:"strategies" json:"strategies,omitempty"`
	Scenarios  []string `yaml:"scenarios" json:"scenarios,omitempty"`
	CPUs       []string `yaml:"cpus" json:"cpus,omitempty"`
	Records    int      `yaml:"records" json:"records"`
}

func (b Batch) matches(c Cell) bool {
	return Exclude{Strategies: b.Strategies, Scenarios: b.Scenarios, CPUs: b.CPUs}.matches(c)
}

// RecordsFor is the records per run of cell c: its batch's, else Records.
func (s Spec) RecordsFor(c Cell) int {
	for _, b := range s.Batches {
		if b.matches(c) {
			return b.Records
		}
	}
	return s.Records
}

// Defaults of the time-scale calibration.
const (
	// DefaultCalibrationPairs is how many runs of each calibrated cell are
	// run again at time scale 1.
	DefaultCalibrationPairs = 3
	// DefaultMaxBias is the largest time-scale bias, as a fraction of the
	// accepted rate at time scale 1, under which a verdict stands.
	DefaultMaxBias = 0.02
)

// CalibrationSpec is how an experiment measures the bias its time scale
// gives the rates and durations it judges: runs 1 to Pairs of every
// calibrated cell are run again, right after each, at time scale 1 with
// the same seed, and each cell's bias is the median of its pairs' rate
// ratios (at the time scale ÷ at 1) − 1, with the median's
// order-statistic interval. A cell is calibrated when a hypothesis whose
// metric a time scale can bias reads it, unless Exclude matches it: its
// verdicts are then labelled uncalibrated.
type CalibrationSpec struct {
	Pairs   int       `yaml:"pairs" json:"pairs"`
	MaxBias float64   `yaml:"max_bias" json:"max_bias"`
	Exclude []Exclude `yaml:"exclude,omitempty" json:"exclude,omitempty"`
}

// CalibrationOf is the experiment's calibration: its file's, or the
// defaults.
func (s Spec) CalibrationOf() CalibrationSpec {
	if s.Calibration != nil {
		return *s.Calibration
	}
	return CalibrationSpec{Pairs: DefaultCalibrationPairs, MaxBias: DefaultMaxBias}
}

// timeBiased are the metrics a time scale can bias: rates, durations and
// latencies, and a phase's counts over its lab time. Counts of records,
// calls, 503s, peaks, GOMAXPROCS and fractions are not: the time scale
// multiplies every service time and timeout alike.
var timeBiased = []string{"accepted_per_second", "duration_seconds",
	PhaseKey("*", "accepted"), PhaseKey("*", "accepted_per_second"), PhaseKey("*", "ended"),
	PhaseKey("*", "record_latency_p50_ms"), PhaseKey("*", "record_latency_p95_ms"), PhaseKey("*", "record_latency_p99_ms")}

// TimeBiased says whether the hypothesis judges a metric (or subtracts
// one) that the time scale can bias.
func (h Hypothesis) TimeBiased() bool {
	biased := func(metric string) bool {
		if metric == "" {
			return false
		}
		if h.Phase != "" {
			metric = PhaseKey("*", metric)
		}
		return slices.Contains(timeBiased, metric)
	}
	return biased(h.Metric) || biased(h.Minus)
}

// CalibratedCells are the cells the calibration measures: every cell a
// time-biased hypothesis reads (versus cells included) that does not run
// in real time, whose scenario does not restart the mock service (its
// restarts act on the experiment's, not on the one at time scale 1), and
// that the calibration's Exclude does not match, in the matrix's order.
func CalibratedCells(s Spec, hs []Hypothesis) []Cell {
	read := map[Cell]bool{}
	for _, h := range hs {
		if !h.TimeBiased() {
			continue
		}
		for _, c := range append(h.AllCells(), h.VersusCells()...) {
			read[c] = true
		}
	}
	cal := s.CalibrationOf()
	var out []Cell
	for _, c := range s.Cells() {
		if read[c] && !s.InRealTime(c) && !s.restarts(c.Scenario) && !slices.ContainsFunc(cal.Exclude, func(e Exclude) bool { return e.matches(c) }) {
			out = append(out, c)
		}
	}
	return out
}

// validateBatches checks each batch's records and lists.
func (s Spec) validateBatches() *problem {
	for i, b := range s.Batches {
		if b.Records < 1 || b.Records > records.MaxRecords {
			return failf(at("batches", i, "records"), "%d must be in [1, %d]", b.Records, records.MaxRecords)
		}
		if p := s.validateLists(at("batches", i), b.Strategies, b.Scenarios, b.CPUs); p != nil {
			return p
		}
	}
	return nil
}

// validateCalibration checks the calibration section: its pairs, its
// limit and its exclusions.
func (s Spec) validateCalibration() *problem {
	c := s.Calibration
	if c == nil {
		return nil
	}
	switch {
	case c.Pairs < 0 || c.Pairs > s.Runs:
		return failf(at("calibration", "pairs"), "%d must be in [0, the runs %d] (0: no calibration)", c.Pairs, s.Runs)
	case !(c.MaxBias > 0) || math.IsInf(c.MaxBias, 0):
		return failf(at("calibration", "max_bias"), "%v must be > 0 (a fraction: 0.02 is 2%%)", c.MaxBias)
	}
	for i, e := range c.Exclude {
		if p := s.validateLists(at("calibration", "exclude", i), e.Strategies, e.Scenarios, e.CPUs); p != nil {
			return p
		}
	}
	return nil
}

// validateLists checks that lists of strategies, scenarios and CPU
// settings name the matrix's own.
func (s Spec) validateLists(l loc, strategies, scenarios, cpus []string) *problem {
	for _, check := range []struct {
		key   string
		vals  []string
		known []string
	}{{"strategies", strategies, s.Strategies}, {"scenarios", scenarios, s.Scenarios}, {"cpus", cpus, names(s.CPUs)}} {
		for j, v := range check.vals {
			if !slices.Contains(check.known, v) {
				return fail(l.in(check.key, j), fmt.Errorf("%q is not in the experiment's %s", v, check.key))
			}
		}
	}
	return nil
}

// restarts says whether scenario restarts the mock service.
func (s Spec) restarts(scenario string) bool {
	p, ok := s.Phased(scenario)
	return ok && p.HasRestart()
}
