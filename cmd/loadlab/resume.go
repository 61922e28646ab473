package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/experiments/runlog"
	"github.com/loadlab/loadlab/experiments/runner"
)

// resumeFlags are the flags --resume takes beside it: where the mock
// services are and how to reach them, what to print, and what the judging
// accepts; the rest comes from the run log.
var resumeFlags = []string{"resume", "target", "admin-token", "wait", "real-time-target", "metrics-listen", "ui", "ui-keep", "json-lines", "accept-bias", "accept-uncalibrated"}

// fromLog, with --resume, reads the folder's run log and takes from it
// the files and settings the experiment began with.
func (o *experimentOptions) fromLog() error {
	if o.resume == "" {
		return nil
	}
	if len(o.notResumed) > 0 && !o.cont {
		return usageErr("experiment: --resume takes the experiment's files and settings from its run log: %s cannot be given with it", strings.Join(o.notResumed, ", "))
	}
	l, err := runlog.Read(o.resume)
	if err != nil {
		return usageErr("experiment: --resume: %v", err)
	}
	if res, err := resultsfile.ReadResults(filepath.Join(o.resume, "results.json")); err == nil && res.Partial == "" {
		return usageErr("experiment: --resume: %s holds the results of a finished experiment: nothing to resume (loadlab check %s checks them)", o.resume, o.resume)
	}
	inv := l.Invocation
	o.file, o.hypotheses, o.overrides, o.out = inv.File, inv.Hypotheses, inv.Overrides, o.resume
	if err := o.shardFlag.Set(inv.Shard); err != nil {
		return usageErr("experiment: --shard %v", err)
	}
	o.calibration.Accept = o.calibration.Accept || inv.AcceptBias
	o.calibration.AcceptUncalibrated = o.calibration.AcceptUncalibrated || inv.AcceptUncalibrated
	o.log = l // its first line says what it resumes (runlog.Announce)
	return nil
}

// continuing, with --continue, makes a start a resume when --out holds
// an unfinished run log of the same experiment: the same files, settings
// and shard. A folder without a run log starts as usual; one of another
// experiment is refused.
func (o *experimentOptions) continuing() error {
	switch {
	case !o.cont:
		return nil
	case o.resume != "":
		return usageErr("experiment: --continue starts or resumes the run in --out; --resume cannot be given with it")
	case o.out == "":
		return usageErr("experiment: --continue needs --out: the folder where a restarted task finds its run log")
	}
	l, err := runlog.Read(o.out)
	if errors.Is(err, runlog.ErrNoLog) {
		return nil
	}
	if err != nil {
		return usageErr("experiment: --continue: %v", err)
	}
	if !l.Invocation.Same(o.invocation()) {
		return usageErr("experiment: --continue: %s holds %s, begun with other files or settings than these; "+
			"loadlab experiment --resume %s finishes it, or choose another folder", o.out, l.Describe(), o.out)
	}
	o.resume = o.out // its flags are the log's, checked just now
	return nil
}

// invocation is what this command begins an experiment with, as its run
// log names it.
func (o *experimentOptions) invocation() runlog.Invocation {
	return runlog.Invocation{File: o.file, Hypotheses: o.hypotheses, Overrides: o.overrides, Shard: o.shardFlag.String(),
		AcceptBias: o.calibration.Accept, AcceptUncalibrated: o.calibration.AcceptUncalibrated}.Absolute()
}

// journal is the run log the experiment keeps in its results folder: a
// new one, or, resumed, the one it goes on with.
func (o *experimentOptions) journal(pe plannedExperiment) runner.Journal {
	if o.calibration.Only {
		return nil
	}
	if o.log != nil {
		return runlog.Append(o.log)
	}
	return runlog.Create(pe.dir, o.invocation())
}

// unfinished is how an experiment that stopped before its end exits, its
// partial results written: 130 interrupted, 1 when its run log could not
// be written; either way with the command that finishes it.
func (o *experimentOptions) unfinished(pe plannedExperiment, res *resultsfile.Results) error {
	resume := runlog.Command(pe.dir, o.reach())
	if errors.Is(o.stopped, runner.ErrJournal) {
		return &cli.ExitError{Code: exitFailed, Err: fmt.Errorf("experiment: %s: %v; partial results written to %s, every run logged before is kept: "+
			"make room, then finish it with: %s", res.Partial, o.stopped, pe.dir, resume)}
	}
	return interrupted(fmt.Errorf("experiment: %s", res.Partial), pe.dir+"; finish it with: "+resume)
}

// unwritten is how an experiment whose results folder could not be
// written exits: 1, saying what its run log still holds.
func (o *experimentOptions) unwritten(pe plannedExperiment, werr error) error {
	if errors.Is(o.stopped, runner.ErrJournal) {
		return &cli.ExitError{Code: exitFailed, Err: fmt.Errorf("experiment: %v; and the results could not be written: %v; every run logged before is kept: "+
			"make room, then finish it with: %s", o.stopped, werr, runlog.Command(pe.dir, o.reach()))}
	}
	return &cli.ExitError{Code: exitFailed, Err: fmt.Errorf("experiment: %v; the run log %s holds the runs: "+
		"make room, then write the results with: %s", werr, filepath.Join(pe.dir, runlog.Name), runlog.Command(pe.dir, o.reach()))}
}

// reach is where the command line said the mock services are and what it
// prints, for the command that finishes the experiment.
func (o *experimentOptions) reach() runlog.Reach {
	return runlog.Reach{Target: o.target, AdminToken: o.adminToken, RealTimeTarget: o.realTimeTarget, Wait: o.wait, JSONLines: o.jsonLines}
}
