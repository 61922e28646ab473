package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/report"
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
		return usageErr("%v", err)
	}
	if _, err := design.LoadHypotheses(*hyp, spec); err != nil {
		return usageErr("%v", err)
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
			"the client's result and the server's stats kept in DIR/results.json, every cell's summary and every\n"+
			"verdict (matched by hypothesis id), prints the verdicts, and exits 1 naming the first figure that\n"+
			"differs from the stored one; 2 when DIR has no results.json or a run lacks its raw data. Results\n"+
			"written before raw data was kept (format 1) are re-judged from their stored metrics.\n", stdout)
	reports := fs.Bool("reports", false, "once everything matches, write DIR/report.md and DIR/report.html again from results.json\n"+
		"(the runs are not changed: for a report drawn by a newer loadlab)")
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
	path := filepath.Join(dir, "results.json")
	res, err := judge.ReadResults(path)
	if err != nil {
		return usageErr("check: %v", err)
	}
	mockCfg := res.Experiment.MockConfig()
	verdicts, err := judge.Check(res, mockCfg)
	if errors.Is(err, judge.ErrNoRawData) {
		return usageErr("check: %s: %v", path, err)
	}
	for i, v := range verdicts {
		label := ""
		if v.Exploratory != "" {
			label = " (exploratory)"
			if i == 0 {
				fmt.Fprintf(stdout, "EXPLORATORY, %s: the verdicts are not findings\n", v.Exploratory)
			}
		}
		fmt.Fprintf(stdout, "%-4s %-12s %s%s\n", v.ID, v.Verdict, v.Claim, label)
	}
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("check: %s: %w", path, err)}
	}
	what := "re-judged from the stored metrics (format 1: no raw data kept)"
	if res.Format >= judge.ResultsFormat {
		what = fmt.Sprintf("%d runs, %d cells and %d verdicts recomputed from raw data", len(res.Runs), len(res.Cells), len(verdicts))
	}
	fmt.Fprintf(stdout, "hypotheses SHA-256 %s; %s: all match the stored ones\n", res.HypothesesSHA256, what)
	switch {
	case res.Shard != nil:
		fmt.Fprintf(stdout, "PARTIAL: shard %s, %d of the matrix's %d runs: these verdicts are the shard's alone; loadlab merge its %d shards for the experiment's\n",
			res.Shard.Shard, len(res.Shard.Units), len(plan.Units(res.Experiment)), res.Shard.Count)
	case len(res.Shards) > 0:
		fmt.Fprintf(stdout, "merged from %d shards\n", len(res.Shards))
	}
	if *reports {
		if err := report.WriteReports(dir, res); err != nil {
			return fmt.Errorf("check: %w", err)
		}
		fmt.Fprintf(stdout, "Wrote %s and %s\n", filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"))
	}
	return nil
}
