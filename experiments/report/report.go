// Package report writes an experiment's results out: results.json, and
// report.md and report.html drawn from the same figures (tables and
// charts, which package charts draws), leading with what was set up and
// run, then the calibration, the cells and the verdicts, and the answer's
// charts as image files. It judges nothing: every figure comes from the
// results (package resultsfile's data), as package judge computed them.
package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/atomicfile"
)

// WriteOutputs writes results.json, report.md and report.html into dir.
func WriteOutputs(dir string, res *resultsfile.Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := resultsfile.WriteJSON(filepath.Join(dir, "results.json"), res); err != nil {
		return err
	}
	return WriteReports(dir, res)
}

// WriteReports writes report.md and report.html into dir (loadlab check
// --reports draws them again, with the current code, from results.json).
func WriteReports(dir string, res *resultsfile.Results) error {
	var md bytes.Buffer
	WriteMarkdown(&md, res)
	if err := atomicfile.Write(filepath.Join(dir, "report.md"), md.Bytes()); err != nil {
		return err
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, res); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, "report.html"), page.Bytes()); err != nil {
		return err
	}
	return writeAnswer(dir, res)
}

// report is what both renderings show, computed once from the results: the
// Markdown and the HTML differ only in how they draw it.
type report struct {
	Title string
	// Partial, when set, is the banner of an interrupted experiment.
	Partial string
	Setup   string // records, runs, time scale, timeouts
	Ran     string // when, where, which commit
	// Strategies says what each strategy of the matrix bounds.
	Strategies string
	// The hypotheses file, its SHA-256 and the commit it was locked at.
	HypothesesFile, HypothesesSHA, LockCommit string
	// Calibration is the time-scale bias table, its introduction and what
	// became of it.
	CalibrationIntro string
	Calibration      table
	CalibrationNote  string
	// Derived is the durations of the experiment's records derived for
	// cells that ran other batches.
	Derived table
	// Advised is the advised strategies per scenario, AdvisedNotes the
	// advice's warnings.
	Advised      table
	AdvisedNotes []string
	AdvisedIntro string
	Accepted     []table
	Cells        table
	// CellsIntro introduces Cells; CellSplit, when set, is where the HTML
	// report divides its columns in two.
	CellsIntro string
	CellSplit  []int
	// OwnIntro, OwnCopies and OwnScenarios say, for an experiment on one's
	// own services, the pipeline, each virtual copy as fitted and what
	// each scenario changed.
	OwnIntro      string
	OwnCopies     table
	OwnScenarios  []string
	Verdicts      []verdictRow
	Counts        string
	VerdictsIntro string
	// Exploratory, when set, is how the run differs from the preregistered
	// design; Excluded lists every run that is not valid, with its reason.
	Exploratory string
	Excluded    []string
	// Phased is the phased scenarios' section (report_phases.go).
	Phased phasedReport
}

// table is a header and rows of cells.
type table struct {
	Caption string
	Head    []string
	Rows    [][]string
}

// verdictRow is one hypothesis as reported.
type verdictRow struct {
	// Label is "exploratory" for a verdict that is not a finding.
	ID, Label, Verdict, Claim, Test string
	Measured                        []string
	Note                            string
}

// Texts shared by both renderings.
const (
	acceptedIntro = "Median (minimum–maximum) over runs; only records whose write the system of record accepted count."
	cellsIntro    = "Bound: Little's law from the configured profiles — the least of write workers / write time, the enrichment budget / (3 × enrichment time), records in flight / time per record; efficiency = measured median / bound."
	verdictsIntro = "Each hypothesis was preregistered before the first run. Supported: the whole min–max range over runs satisfies the claim; refuted: none of it does; inconclusive: the range straddles the threshold. A refuted hypothesis is a finding, not a failure."
	pairedIntro   = "Rules paired-v2: only valid runs count, and a cell with fewer valid runs than the experiment asks for is inconclusive (insufficient runs). A comparison of two cells is judged on the per-run ratios (or differences) of runs with the same number, which drew the same service times (the same seed); the 95% bootstrap interval of their median is information, not the verdict rule."
	pairedV3Intro = "Rules paired-v3: only valid runs count, and a cell with fewer valid runs than the experiment asks for is inconclusive (insufficient runs). A comparison of two cells is judged on the per-run ratios (or differences) of runs with the same number, which drew the same service times (the same seed). The interval given with each median is distribution-free: the k-th smallest and k-th largest of n values, covering the median with the probability stated (at 5 runs [min, max], 93.75%); it is information, not the verdict rule. A verdict on rates or durations is gated by the time-scale calibration of the cells it reads (see above); labelled provisional, it is not final."
)

func newReport(r *resultsfile.Results) report {
	sp := r.Experiment
	rep := report{Title: fmt.Sprintf("Experiment %q", sp.Name), Setup: setup(r), Ran: ran(r), Partial: partial(r),
		HypothesesFile: r.HypothesesFile, HypothesesSHA: short(r.HypothesesSHA256), LockCommit: short(r.Lock.GitCommit),
		AdvisedIntro: advisedIntro, Phased: phasedReportOf(r), Accepted: acceptedTables(r), Cells: cellsTable(r), CellsIntro: cellsIntro}
	if sp.Own != nil {
		rep.Cells, rep.CellSplit = ownCellsTable(r)
		rep.CellsIntro = ownCellsIntro
		rep.OwnIntro, rep.OwnCopies, rep.OwnScenarios = ownSection(sp)
		rep.AdvisedIntro = strings.Replace(advisedIntro, "the lab's pipeline was probed on the mock service under the scenario's profile",
			"the pipeline was probed on its virtual copy as the scenario shapes it", 1)
	}
	rep.VerdictsIntro = verdictsIntro
	if len(r.Hypotheses) > 0 && r.Hypotheses[0].Rules == design.RulesPairedV2 {
		rep.VerdictsIntro = verdictsIntro + " " + pairedIntro
	}
	if len(r.Hypotheses) > 0 && r.Hypotheses[0].Rules == design.RulesPairedV3 {
		rep.VerdictsIntro = verdictsIntro + " " + pairedV3Intro
	}
	if r.TimeScaleBias != nil {
		rep.CalibrationIntro, rep.Calibration, rep.CalibrationNote = biasTable(r)
	} else {
		rep.Calibration, rep.CalibrationNote = calibrationTable(r.Calibration)
		if len(rep.Calibration.Rows) > 0 {
			rep.CalibrationIntro = fmt.Sprintf("Accepted records per lab second, median (minimum–maximum), %s.", rep.Calibration.Caption)
		}
	}
	rep.Derived = derivedTable(r)
	rep.Advised, rep.AdvisedNotes = advisedTable(r.Advised)
	rep.Strategies = strategiesText(sp)
	rep.Verdicts, rep.Counts, rep.Exploratory = verdictRows(r.Verdicts, r.Hypotheses)
	for _, run := range r.Runs {
		if !run.Valid() {
			rep.Excluded = append(rep.Excluded, fmt.Sprintf("%s run %d (seed %d): %s: %s", run.Cell, run.Run, run.Seed, run.Status, run.Reason))
		}
	}
	return rep
}

// ran says when and where the experiment ran, and each shard's machine.
func ran(r *resultsfile.Results) string {
	e := r.Environment
	s := fmt.Sprintf("Ran %s to %s on %s (%d CPUs), Go %s, kernel %s", r.Started.Format("2006-01-02 15:04:05Z"),
		r.Finished.Format("15:04:05Z"), e.CPUModel, e.NumCPU, e.GoVersion, e.Kernel)
	if e.GitCommit != "" {
		s += ", commit " + short(e.GitCommit)
	}
	s += "."
	if len(r.Shards) > 0 {
		var each []string
		for _, sh := range r.Shards {
			rt := sh.Environment.Runtime
			each = append(each, fmt.Sprintf("shard %d: %d runs on %s (GOMAXPROCS %d, NumCPU %d, CPU quota %s)",
				sh.Index, sh.Runs, sh.Environment.Hostname, rt.GOMAXPROCS, rt.NumCPU, rt.Quota()))
		}
		s += fmt.Sprintf(" Merged from %d shards (loadlab merge): %s.", len(r.Shards), strings.Join(each, "; "))
	}
	return s + resumed(r.Attempts)
}

// partial is the banner of a shard's or an interrupted experiment's
// results, "" for whole results.
func partial(r *resultsfile.Results) string {
	switch {
	case r.Shard != nil:
		s := fmt.Sprintf("PARTIAL: shard %s, %d of the matrix's %d runs", r.Shard.Shard, len(r.Shard.Units), len(plan.Units(r.Experiment)))
		if r.Partial != "" {
			s += ", and " + r.Partial
		}
		return s + fmt.Sprintf("; the statistics and verdicts below are this shard's alone: loadlab merge its %d shards for the experiment's.", r.Shard.Count)
	case r.Partial != "":
		return "PARTIAL: " + r.Partial + "; the statistics and verdicts below are over the completed runs only."
	}
	return ""
}

// acceptedTables is, per CPU setting, the accepted records per second of
// every strategy under every scenario.
func acceptedTables(r *resultsfile.Results) []table {
	sp := r.Experiment
	var out []table
	for _, cpu := range sp.CPUs {
		t := table{Caption: cpu.Name, Head: append([]string{"strategy"}, sp.Scenarios...)}
		for _, st := range sp.Strategies {
			row := []string{st}
			found := false
			for _, sc := range sp.Scenarios {
				cs, ok := r.Summary(design.Cell{Strategy: st, Scenario: sc, CPU: cpu.Name})
				s, sok := cs.Stats["accepted_per_second"]
				row = append(row, fmtStat(s, ok && sok, 2))
				found = found || ok
			}
			if found {
				t.Rows = append(t.Rows, row)
			}
		}
		if len(t.Rows) > 0 {
			out = append(out, t)
		}
	}

	return out
}

// cellsTable is every cell's figures, its bound and its valid runs.
func cellsTable(r *resultsfile.Results) table {
	sp := r.Experiment
	var t table
	t.Head = []string{"cell", "accepted/s", "bound (limit)", "efficiency", "duration s", "write 503s", "peak concurrent writes",
		"peak enrichment calls", "peak write calls", "incomplete", "permit timeouts", "call timeouts", "GOMAXPROCS", "CPU limit",
		"valid runs", "excluded runs"}
	for _, cs := range r.Cells {
		g := func(m string, d int) string { s, ok := cs.Stats[m]; return fmtStat(s, ok, d) }
		bound, eff := fmt.Sprintf("%.1f (%s)", cs.Bound.Bound, cs.Bound.Limit), fmt.Sprintf("%.2f", cs.Efficiency)
		if cs.Bound.Limit == "" {
			bound, eff = "— (phased: see below)", "—"
		}
		t.Rows = append(t.Rows, []string{cs.Cell.String(), g("accepted_per_second", 2),
			bound, eff,
			g("duration_seconds", 1), g("write_rejections", 0), g("peak_concurrent_writes", 0),
			g("peak_in_flight_enrichment", 0), g("peak_in_flight_records", 0), g("incomplete", 0),
			g("permit_timeouts", 0), g("call_timeouts", 0), g("gomaxprocs", 0), cs.Mechanism,
			fmt.Sprintf("%d of %d", cs.Valid, sp.Runs), excludedReasons(cs.Excluded)})
	}
	return t
}

// verdictRows is the verdicts as reported, their counts, and how the run
// differs from the preregistered design when they are exploratory.
func verdictRows(vs []resultsfile.Verdict, hs []design.Hypothesis) (rows []verdictRow, counts, exploratoryWhy string) {
	found, exploratory := map[resultsfile.Decision]int{}, map[resultsfile.Decision]int{}
	labelled := map[resultsfile.CalibrationLabel]int{}
	for _, v := range vs {
		var meas []string
		for _, c := range v.Cells {
			meas = append(meas, measured(v, c))
		}
		row := verdictRow{ID: v.ID, Verdict: string(v.Verdict), Claim: v.Claim,
			Test: testText(v, hs), Measured: meas, Note: v.Note, Label: calibrationLabel(v)}
		switch {
		case v.Exploratory != "":
			row.Label = strings.TrimSuffix("exploratory, "+row.Label, ", ")
			exploratory[v.Verdict]++
			exploratoryWhy = v.Exploratory
		case v.Calibration == resultsfile.LabelProvisional:
			labelled[v.Calibration]++
		default:
			found[v.Verdict]++
			labelled[v.Calibration]++
		}
		rows = append(rows, row)
	}
	counts = fmt.Sprintf("%d supported, %d refuted, %d inconclusive.", found[resultsfile.Supported], found[resultsfile.Refuted], found[resultsfile.Inconclusive])
	if n := labelled[resultsfile.LabelProvisional]; n > 0 {
		counts += fmt.Sprintf(" %d more provisional (not final: the time-scale bias of cells they read was not measured or did not resolve).", n)
	}
	if n := labelled[resultsfile.LabelHolds]; n > 0 {
		counts += fmt.Sprintf(" Of the verdicts counted, %s the same at every time-scale bias of cells whose bias did not resolve within the limit.", isAre(n))
	}
	if n := labelled[resultsfile.LabelUncalibrated]; n > 0 {
		counts += fmt.Sprintf(" Of the verdicts counted, %s uncalibrated (their cells' time-scale bias is not measured by the experiment's plan).", isAre(n))
	}
	if exploratoryWhy != "" {
		counts = fmt.Sprintf("No findings: every verdict is exploratory (%s): %d supported, %d refuted, %d inconclusive, none of them a result.",
			exploratoryWhy, exploratory[resultsfile.Supported], exploratory[resultsfile.Refuted], exploratory[resultsfile.Inconclusive])
	}
	return rows, counts, exploratoryWhy
}

// isAre is "1 is" or "n are".
func isAre(n int) string {
	if n == 1 {
		return "1 is"
	}
	return fmt.Sprintf("%d are", n)
}

// measured is a verdict's figures in one cell: median [min, max], for a
// paired comparison what is paired, and the bootstrap interval.
func measured(v resultsfile.Verdict, c resultsfile.CellVerdict) string {
	s := fmt.Sprintf("%s: %.3g [%.3g, %.3g]", c.Cell, c.Median, c.Min, c.Max)
	if c.Runs == 0 {
		s = c.Cell.String() + ": —"
	}
	if v.Rules.Paired() && c.Runs > 0 {
		s += fmt.Sprintf(" over %d runs", c.Runs)
		if c.Bootstrap != nil {
			s += fmt.Sprintf(", median's 95%% bootstrap interval [%.3g, %.3g]", c.Bootstrap.Lo, c.Bootstrap.Hi)
		}
		if c.Interval != nil {
			s += fmt.Sprintf(", median's order-statistic interval [%.3g, %.3g] (%.2f%% coverage)", c.Interval.Lo, c.Interval.Hi, 100*c.Interval.Coverage)
		}
	}
	return s + " → " + string(c.Verdict)
}

// excludedReasons is a cell's excluded runs, one line each, or "none".
func excludedReasons(ex []string) string {
	if len(ex) == 0 {
		return "none"
	}
	return strings.Join(ex, "; ")
}

// fmtStat prints a median and its range, or "—" when there is none.
func fmtStat(s resultsfile.Stat, ok bool, digits int) string {
	if !ok || s.N == 0 {
		return "—"
	}
	f := fmt.Sprintf("%%.%df", digits)
	if s.Min == s.Max {
		return fmt.Sprintf(f, s.Median)
	}
	return fmt.Sprintf(f+" ("+f+"–"+f+")", s.Median, s.Min, s.Max)
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	if s == "" {
		return "(none)"
	}
	return s
}

// fmtBias is a strategy's bias in percent, or "not measured".
func fmtBias(s resultsfile.StrategyBias) string {
	if s.Unmeasured {
		return "not measured"
	}
	return fmt.Sprintf("%+.1f%%", 100*s.Bias)
}

// calibrationTable is the time-scale bias per strategy and a sentence on
// what it means for the verdicts.
func calibrationTable(c *resultsfile.Calibration) (table, string) {
	switch {
	case c == nil:
		return table{}, "Time-scale bias: not measured (results from before the calibration existed)."
	case c.Skipped != "":
		return table{}, "Time-scale bias: not measured: " + c.Skipped + "."
	}
	t := table{Caption: fmt.Sprintf("healthy, %s, %d runs each", c.CPU, c.Runs),
		Head: []string{"strategy", "accepted/s at time scale 1", fmt.Sprintf("at time scale %g", c.TimeScale), "bias", "failed runs"}}
	for _, s := range c.Strategies {
		t.Rows = append(t.Rows, []string{s.Strategy, fmtStat(s.AtOne, true, 2), fmtStat(s.AtScale, true, 2),
			fmtBias(s), fmt.Sprint(len(s.Failed))})
	}
	why := c.Exceeded()
	switch {
	case why == "":
		return t, fmt.Sprintf("Every bias is within the limit of %.1f%%: the verdicts stand.", 100*c.MaxBias)
	case c.Accepted:
		return t, "ACCEPTED: " + why + ", accepted with --accept-bias: the verdicts below are judged on measurements that carry this bias."
	default:
		return t, "Not judged: " + why + "; every verdict is inconclusive (--accept-bias judges anyway, and says so)."
	}
}
