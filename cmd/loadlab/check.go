package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/experiments/runlog"
)

func runPreregister(args []string, stdout io.Writer) error {
	fs, parse := newFlagSet("preregister",
		"Locks the hypotheses file: records its SHA-256 (and the git commit, and whether the file is committed\n"+
			"unchanged) in the .lock file beside it. loadlab experiment refuses to judge a file that no longer matches.\n", stdout)
	file := fs.String("file", defaultExperiment, "experiment file the hypotheses refer to (checked first)")
	hyp := fs.String("hypotheses", defaultHypotheses, "hypotheses file")
	if err := parse(args); err != nil {
		return err
	}
	spec, err := design.LoadSpec(*file)
	if err != nil {
		return usageErr("preregister: --file: %v", err)
	}
	if _, err := design.LoadHypotheses(*hyp, spec); err != nil {
		return usageErr("preregister: --hypotheses: %v", err)
	}
	l, err := design.Preregister(*hyp, spec, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Locked %s: SHA-256 %s", *hyp, l.SHA256)
	if l.GitCommit != "" {
		fmt.Fprintf(stdout, ", commit %s (file committed unchanged: %v)", l.GitCommit, l.GitClean)
	}
	fmt.Fprintf(stdout, "\nWrote %s\n", design.LockPath(*hyp))
	return nil
}

func runCheck(args []string, stdout io.Writer) error {
	fs, parse := newFlagSet("check DIR",
		"Recomputes a results folder from its raw data: every run's metrics, reconciliation and status from\n"+
			"the client's result and the server's stats kept in DIR/results.json, the time-scale calibration from its\n"+
			"runs at time scale 1, every cell's summary and every verdict (matched by hypothesis id), prints the\n"+
			"verdicts, and exits 1 naming the first figure that differs from the stored one; 2 when DIR has no\n"+
			"results.json or a run lacks its raw data. Results written before raw data was kept (format 1) are\n"+
			"re-judged from their stored metrics. With --accept-bias or --accept-uncalibrated, once everything\n"+
			"matches, the stored runs are judged again accepting what the flag names, without running anything,\n"+
			"and DIR's results.json and reports are written again, saying so.\n", stdout)
	reports := fs.Bool("reports", false, "once everything matches, write DIR/report.md and DIR/report.html again from results.json\n"+
		"(the runs are not changed: for a report drawn by a newer loadlab)")
	acceptBias := fs.Bool("accept-bias", false, "once everything matches, judge again the verdicts that a time-scale bias beyond the limit\nmade inconclusive, accepting the bias")
	acceptUncal := fs.Bool("accept-uncalibrated", false, "once everything matches, make final the verdicts the calibration left provisional")
	if len(args) == 0 {
		return usageErr("check: which results folder?")
	}
	// DIR before or after the flags (every flag of check is a switch, so
	// an argument that is not a flag is the folder).
	flags, dirs := splitArgs(args)
	if err := parse(flags); err != nil {
		return err
	}
	switch {
	case len(dirs) == 0:
		return usageErr("check: which results folder?")
	case len(dirs) > 1:
		return usageErr("check: one results folder, not %d (%s)", len(dirs), strings.Join(dirs, ", "))
	}
	dir := dirs[0]
	res, err := checkFolder(dir, stdout)
	if err != nil {
		return err
	}
	if *acceptBias || *acceptUncal {
		return acceptAfter(dir, res, *acceptBias, *acceptUncal, stdout)
	}
	if *reports {
		if err := report.WriteReports(dir, res); err != nil {
			return fmt.Errorf("check: %w", err)
		}
		fmt.Fprintf(stdout, "Wrote %s and %s\n", filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"))
	}
	return nil
}

// checkFolder checks dir's results.json, printing the recomputed verdicts
// and what was recomputed.
func checkFolder(dir string, stdout io.Writer) (*resultsfile.Results, error) {
	path := filepath.Join(dir, "results.json")
	res, err := resultsfile.ReadResults(path)
	if err != nil {
		return nil, usageErr("check: %v%s", err, runlog.Hint(dir))
	}
	verdicts, err := judge.Check(res, res.Experiment.MockConfig())
	if errors.Is(err, judge.ErrNoRawData) {
		return nil, usageErr("check: %s: %v", path, err)
	}
	printVerdicts(stdout, verdicts)
	if err != nil {
		return nil, &cli.ExitError{Code: exitFailed, Err: fmt.Errorf("check: %s: %w", path, err)}
	}
	what := "re-judged from the stored metrics (format 1: no raw data kept)"
	if res.Format >= resultsfile.ResultsFormat {
		what = fmt.Sprintf("%d runs, %d cells and %d verdicts recomputed from raw data", len(res.Runs), len(res.Cells), len(verdicts))
		if b := res.TimeScaleBias; b != nil && b.Skipped == "" {
			what = fmt.Sprintf("%d runs, %d runs at time scale 1, %d calibrated cells, %d cells and %d verdicts recomputed from raw data",
				len(res.Runs), len(b.Twins), len(b.Measured), len(res.Cells), len(verdicts))
		}
	}
	fmt.Fprintf(stdout, "hypotheses SHA-256 %s; %s: all match the stored ones\n", res.HypothesesSHA256, what)
	if n := judge.Provisional(verdicts); n > 0 {
		fmt.Fprintf(stdout, "%s provisional (the time-scale bias of cells they read was not measured or did not resolve): "+
			"loadlab check --accept-uncalibrated %s makes them final\n", verdictsAre(n), dir)
	}
	if n := judge.GatedByBias(verdicts); n > 0 {
		fmt.Fprintf(stdout, "%s inconclusive for a time-scale bias beyond the limit: loadlab check --accept-bias %s judges them over it\n", verdictsAre(n), dir)
	}
	if res.Partial != "" {
		fmt.Fprintf(stdout, "PARTIAL: %s%s\n", res.Partial, runlog.Hint(dir))
	}
	switch {
	case res.Shard != nil:
		fmt.Fprintf(stdout, "PARTIAL: shard %s, %d of the matrix's %d runs: these verdicts are the shard's alone; loadlab merge its %d shards for the experiment's\n",
			res.Shard.Shard, len(res.Shard.Units), len(plan.Units(res.Experiment)), res.Shard.Count)
	case len(res.Shards) > 0:
		fmt.Fprintf(stdout, "merged from %d shards\n", len(res.Shards))
	}
	return res, nil
}

// printVerdicts prints one line a verdict, labelled when exploratory or
// when the calibration says something of it.
func printVerdicts(w io.Writer, verdicts []resultsfile.Verdict) {
	for i, v := range verdicts {
		label := ""
		if v.Exploratory != "" {
			label = " (exploratory)"
			if i == 0 {
				fmt.Fprintf(w, "EXPLORATORY, %s: the verdicts are not findings\n", v.Exploratory)
			}
		}
		if v.Calibration != "" {
			label += " (" + string(v.Calibration) + ")"
		}
		fmt.Fprintf(w, "%-4s %-12s %s%s\n", v.ID, v.Verdict, v.Claim, label)
	}
}

// acceptAfter judges checked results again accepting a bias beyond the
// limit and/or what the calibration left unmeasured, and writes the
// folder's results.json and reports again, saying when and how.
func acceptAfter(dir string, res *resultsfile.Results, bias, uncalibrated bool, stdout io.Writer) error {
	var flags []string
	if bias {
		flags = append(flags, "--accept-bias")
	}
	if uncalibrated {
		flags = append(flags, "--accept-uncalibrated")
	}
	by := fmt.Sprintf("loadlab check %s, %s", strings.Join(flags, " "), time.Now().UTC().Format(time.RFC3339))
	if err := judge.Accept(res, bias, uncalibrated, by); err != nil {
		return usageErr("check: %v", err)
	}
	fmt.Fprintf(stdout, "\nJudged again (%s):\n", by)
	printVerdicts(stdout, res.Verdicts)
	if err := report.WriteOutputs(dir, res); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	fmt.Fprintf(stdout, "Wrote %s, %s and %s\n", filepath.Join(dir, "results.json"), filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"))
	return nil
}
