package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadlab/loadlab/experiments"
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
	spec, err := experiments.LoadSpec(*file)
	if err != nil {
		return usageErr("%v", err)
	}
	if _, err := experiments.LoadHypotheses(*hyp, spec); err != nil {
		return usageErr("%v", err)
	}
	l, err := experiments.Preregister(*hyp, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Locked %s: SHA-256 %s", *hyp, l.SHA256)
	if l.GitCommit != "" {
		fmt.Fprintf(stdout, ", commit %s (file committed unchanged: %v)", l.GitCommit, l.GitClean)
	}
	fmt.Fprintf(stdout, "\nWrote %s\n", experiments.LockPath(*hyp))
	return nil
}

func runCheck(args []string, stdout io.Writer) error {
	_, parse := newFlagSet("check DIR",
		"Re-judges a results folder: recomputes every cell's statistics and every verdict from the raw runs in\n"+
			"DIR/results.json, prints the verdicts, and exits 1 if they differ from the stored ones.\n", stdout)
	if len(args) == 0 {
		return usageErr("check: which results folder?")
	}
	dir, rest := args[0], args[1:]
	if strings.HasPrefix(dir, "-") {
		dir, rest = "", args
	}
	if err := parse(rest); err != nil {
		return err
	}
	if dir == "" {
		return usageErr("check: which results folder?")
	}
	res, err := experiments.ReadResults(filepath.Join(dir, "results.json"))
	if err != nil {
		return usageErr("check: %v", err)
	}
	verdicts := experiments.Rejudge(res)
	differ := 0
	for i, v := range verdicts {
		stored := "(none)"
		if i < len(res.Verdicts) {
			stored = res.Verdicts[i].Verdict
		}
		mark := ""
		if stored != v.Verdict {
			mark = "  ≠ stored " + stored
			differ++
		}
		fmt.Fprintf(stdout, "%-4s %-12s %s%s\n", v.ID, v.Verdict, v.Claim, mark)
	}
	if differ > 0 {
		return &exitError{code: exitFailed, err: errors.New("check: verdicts differ from the stored ones")}
	}
	fmt.Fprintf(stdout, "hypotheses SHA-256 %s; %d verdicts match the stored ones\n", res.HypothesesSHA256, len(verdicts))
	return nil
}
