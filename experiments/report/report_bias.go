package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// biasIntro introduces the calibration table of results calibrated cell
// by cell.
const biasIntro = "Each calibrated cell's runs 1 to %d were run again, right after each, at time scale 1 with the same seed; " +
	"a pair's ratio is its accepted records per lab second at time scale %g ÷ at time scale 1, the cell's bias the median ratio − 1, " +
	"and its interval the median's order-statistic interval (distribution-free: at n pairs [min, max] covers the median with " +
	"probability 1 − 2 × 0.5^n: 75%% at 3, 93.75%% at 5)."

// biasTable is the calibration of results calibrated cell by cell: a row
// a calibrated cell, and sentences on what it means for the verdicts.
func biasTable(r *resultsfile.Results) (string, table, string) {
	b := r.TimeScaleBias
	if b.Skipped != "" {
		return "", table{}, "Time-scale bias: not measured: " + b.Skipped + "."
	}
	t := table{Head: []string{"cell", "pairs", "ratios", "bias", "interval", "coverage", "against the limit"}}
	for _, m := range b.Measured {
		ratios := make([]string, len(m.Ratios))
		for i, x := range m.Ratios {
			ratios[i] = fmt.Sprintf("%.4f", x)
		}
		bias, iv, cov := "—", "—", "—"
		if len(m.Ratios) > 0 {
			bias = fmt.Sprintf("%+.1f%%", 100*m.Bias)
		}
		if m.Interval != nil {
			iv, cov = fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*m.Interval.Lo, 100*m.Interval.Hi), fmt.Sprintf("%.2f%%", 100*m.Interval.Coverage)
		}
		t.Rows = append(t.Rows, []string{m.Cell.String(), fmt.Sprint(len(m.Ratios)), strings.Join(ratios, ", "), bias, iv, cov, string(m.State)})
	}
	return fmt.Sprintf(biasIntro, b.Pairs, b.TimeScale), t, biasNote(r)
}

// biasNote says what the calibration does to the verdicts: the limit,
// what was not calibrated, what did not complete, what was accepted.
func biasNote(r *resultsfile.Results) string {
	b := r.TimeScaleBias
	notes := []string{fmt.Sprintf("Only verdicts on rates and durations read the calibration, each through the cells it reads. "+
		"When a cell's bias is beyond ±%.1f%% or its interval straddles the limit, the verdict is judged again with each cell's figures "+
		"brought back to time scale 1 by every ratio (of the verdict's own metric, at the time scale ÷ at 1) that the median's interval of the cell's pairs allows: "+
		"if it is the same throughout, it holds (final, labelled so); if not, a bias beyond the limit makes it inconclusive and an unresolved one provisional. "+
		"A cell that should have been measured and was not makes them provisional.", 100*b.MaxBias)}
	if un := uncalibrated(r); len(un) > 0 {
		notes = append(notes, "Not calibrated, by the experiment's plan (their verdicts on rates and durations are labelled uncalibrated): "+strings.Join(un, ", ")+".")
	}
	if b.Incomplete != "" {
		notes = append(notes, "INCOMPLETE: "+b.Incomplete+"; the verdicts it would have gated are provisional.")
	}
	by := "at the run"
	if b.AcceptedBy != "" {
		by = "after it, by " + b.AcceptedBy
	}
	if b.Accepted {
		notes = append(notes, "ACCEPTED "+by+": biases beyond the limit; the verdicts over them are judged on measurements that carry them.")
	}
	if b.AcceptedUncalibrated {
		notes = append(notes, "ACCEPTED "+by+": verdicts whose biases were not measured or did not resolve are final.")
	}
	return strings.Join(notes, " ")
}

// uncalibrated are the cells a verdict on rates or durations reads that
// the calibration does not measure.
func uncalibrated(r *resultsfile.Results) []string {
	var out []string
	for _, h := range r.Hypotheses {
		if !h.TimeBiased() {
			continue
		}
		for _, c := range append(h.AllCells(), h.VersusCells()...) {
			if !slices.Contains(r.TimeScaleBias.Cells, c) && !r.Experiment.InRealTime(c) && !slices.Contains(out, c.String()) {
				out = append(out, c.String())
			}
		}
	}
	return out
}

// derivedTable is, for cells that ran fewer (or more) records than the
// experiment's, the duration the experiment's records would take at the
// cell's measured rate: derived, not measured.
func derivedTable(r *resultsfile.Results) table {
	sp := r.Experiment
	t := table{Caption: fmt.Sprintf("Cells whose runs had another batch than the experiment's %d records: the duration of %d records, "+
		"derived as %d ÷ the measured accepted records per lab second (median, and from the range of the rate).", sp.Records, sp.Records, sp.Records),
		Head: []string{"cell", "records per run", "measured duration s (lab)", fmt.Sprintf("%d records, derived s (lab)", sp.Records)}}
	for _, cs := range r.Cells {
		n := sp.RecordsFor(cs.Cell)
		rate, ok := cs.Stats["accepted_per_second"]
		if n == sp.Records || !ok || rate.N == 0 || !(rate.Min > 0) {
			continue
		}
		d, _ := cs.Stats["duration_seconds"]
		derived := resultsfile.Stat{Median: float64(sp.Records) / rate.Median, Min: float64(sp.Records) / rate.Max, Max: float64(sp.Records) / rate.Min, N: rate.N}
		t.Rows = append(t.Rows, []string{cs.Cell.String(), fmt.Sprint(n), fmtStat(d, d.N > 0, 1), fmtStat(derived, true, 1) + " (derived)"})
	}
	return t
}

// calibrationLabel is how a verdict's row names what the calibration says
// of it, "" for nothing.
func calibrationLabel(v resultsfile.Verdict) string { return string(v.Calibration) }
