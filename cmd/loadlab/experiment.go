package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/cmd/internal/dashboard"
	"github.com/loadlab/loadlab/experiments"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/experiments/runlog"
	"github.com/loadlab/loadlab/experiments/runner"
	"github.com/loadlab/loadlab/mockservice/field"
)

// The replication's files in the repository, which loadlab preregister
// locks; loadlab experiment reads the same files built into loadlab unless
// --file or --hypotheses names one on disk.
const (
	defaultExperiment = "experiments/" + experiments.Replication
	defaultHypotheses = "experiments/" + experiments.ReplicationHypotheses
)

var experimentSynopsis = synopsis("experiment")

// experimentFlags maps the fields named in the experiment packages'
// errors to loadlab experiment's flags.
var experimentFlags = field.Names{
	"time_scale": "--time-scale", "runs": "--runs", "records": "--records",
	"calibration.pairs": "--calibration-runs", "calibration.max_bias": "--max-bias", "shard": "--shard",
}

// experimentOptions is loadlab experiment's command line.
type experimentOptions struct {
	file, hypotheses, out, target, adminToken, metricsAddr string
	overrides                                              design.Overrides
	wait                                                   time.Duration
	calibration                                            runner.Calibration
	calibrationPairs                                       int
	maxBias                                                float64
	realTimeTarget                                         string
	jsonLines, force, cont                                 bool
	// shard is --shard's part of the matrix (the zero value: all of it);
	// shardFlag the flag, whose text the run log keeps.
	shard     plan.Shard
	shardFlag *cli.Parsed[plan.Shard]
	// lines, with --json-lines, prints each run and then the results.
	lines *resultsfile.LineWriter
	// resume is --resume's folder, log its run log; notResumed the flags
	// given that --resume does not take; stopped why the runner stopped
	// before the end.
	resume     string
	log        *runlog.Log
	notResumed []string
	stopped    error
	// ui is --ui's address; dash its dashboard, live the experiment on it.
	ui     string
	uiKeep bool
	dash   *dashboard.Server
	live   *dashboard.ExperimentProgress
	// starter is --init's: the pipeline and probes of a starter experiment.
	starter initOptions
}

// bind declares the flags into o.
func (o *experimentOptions) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.file, "file", "", "experiment file (default: the replication built into loadlab, "+defaultExperiment+")")
	fs.StringVar(&o.hypotheses, "hypotheses", "", "preregistered hypotheses (must match their lock; see loadlab preregister)\n"+
		"(default: those built into loadlab, "+defaultHypotheses+", and their lock)")
	fs.StringVar(&o.out, "out", "", "results folder (default results/NAME-YYYYMMDD-HHMMSS)")
	fs.BoolVar(&o.force, "force", false, "replace the results (or run log) an --out folder already holds (refused otherwise)")
	fs.StringVar(&o.resume, "resume", "", "finish the experiment whose results folder this is, after Ctrl-C, a kill or a crash: its run log\n"+
		"(run-log.jsonl) names the files and settings; refused when they or the loadlab binary changed since. Runs\n"+
		"only the missing runs, each with its seed, and writes the results of them all")
	fs.BoolVar(&o.cont, "continue", false, "with --out: resume the run that folder holds when it is this experiment's, unfinished (its run log\n"+
		"names the same files and settings), else start; for an orchestrator that restarts a killed task with its\n"+
		"arguments (Docker Swarm's restart policy, a Kubernetes Job's restarted pod)")
	fs.StringVar(&o.target, "target", "", "base URL of a running mock service (default: start one in-process)")
	fs.StringVar(&o.adminToken, "admin-token", "", "bearer token of the mock service's admin routes")
	fs.Float64Var(&o.overrides.TimeScale, "time-scale", 0, "override the file's time scale (its real_time cells stay at 1)")
	fs.IntVar(&o.overrides.Runs, "runs", 0, "override the file's runs per cell (calibration pairs above it come down to it)")
	fs.IntVar(&o.overrides.Records, "records", 0, "override the file's records per run (the cells of its batches keep theirs)")
	fs.DurationVar(&o.wait, "wait", 0, "wait up to this long for the mock service to answer (e.g. 60s when it starts alongside)")
	fs.StringVar(&o.ui, "ui", "", dashboard.Flag)
	fs.BoolVar(&o.uiKeep, "ui-keep", false, dashboard.KeepFlag)
	fs.StringVar(&o.metricsAddr, "metrics-listen", "", "serve the runner's Prometheus metrics on this address (e.g. 0.0.0.0:9090)")
	fs.IntVar(&o.calibrationPairs, "calibration-runs", -1, fmt.Sprintf("override the file's calibration pairs (-1: the file's; %d when it has none): runs 1 to N of every cell a\n"+
		"hypothesis on rates or durations reads are run again, right after each, at time scale 1 with the same seed, and\n"+
		"each cell's bias is the median of its pairs' rate ratios; 0 turns the calibration off (those verdicts are then\n"+
		"labelled uncalibrated). A value other than the locked design's makes the run exploratory", design.DefaultCalibrationPairs))
	fs.Float64Var(&o.maxBias, "max-bias", 0, fmt.Sprintf("override the file's limit of the time-scale bias (0: the file's, by default %g), a fraction of the rate\n"+
		"at time scale 1: a verdict on rates or durations that a bias in the interval of a cell it reads could change is\n"+
		"inconclusive when the cell is beyond the limit, provisional when the cell's interval straddles it", design.DefaultMaxBias))
	fs.StringVar(&o.realTimeTarget, "real-time-target", "", "base URL of a running mock service at time scale 1, for the calibration's runs and the cells the\n"+
		"experiment runs in real time (default: one in-process; give one when --target's runs somewhere else, so that\n"+
		"both halves of a pair meet alike mock services)")
	fs.BoolVar(&o.calibration.Accept, "accept-bias", false, "judge the verdicts whose cells' biases are beyond the limit anyway; the report says so\n"+
		"(loadlab check --accept-bias DIR does it after the run)")
	fs.BoolVar(&o.calibration.AcceptUncalibrated, "accept-uncalibrated", false, "make final the verdicts whose cells' biases could not be measured or did not resolve (provisional:\n"+
		"exit 1 otherwise); the report says so")
	o.shardFlag = partFlag(&o.shard, plan.ParseShard)
	fs.Var(o.shardFlag, "shard", "run only part i of n of the matrix (i from 0, like a Kubernetes Indexed Job's\n"+
		"JOB_COMPLETION_INDEX): every run of every cell goes to one shard, balanced by expected duration, run k\n"+
		"keeping its seed; the results folder is partial, saying so, until loadlab merge combines the n shards")
	fs.BoolVar(&o.jsonLines, "json-lines", false, "print JSON lines on stdout instead of the summary: {\"kind\":\"run\",...} as each run ends,\n"+
		"then {\"kind\":\"results\",...} with the whole results.json (loadlab merge reads such a log: kubectl logs)")
	fs.BoolVar(&o.starter.init, "init", false, "write a starter experiment on your own services (at --file, default "+starterExperiment+") and its hypotheses\n"+
		"(at --hypotheses, default "+starterHypotheses+") from --pipeline and a --probe of each dependency, run nothing, and exit")
	fs.StringVar(&o.starter.pipeline, "pipeline", "", "with --init: your pipeline file")
	o.starter.probes.Form = "NAME=FILE"
	fs.Var(&o.starter.probes, "probe", "with --init: NAME=FILE, the JSON of loadlab probe --json of the dependency NAME (repeat for each)")
	fs.BoolVar(&o.calibration.Only, "calibration-only", false, "run the calibrated cells' pairs alone, print their biases and exit (0 when every bias is within the\n"+
		"limit, 1 otherwise): which time scale can this machine run the experiment at?")
}

// plannedExperiment is an experiment as loaded from its options, ready to
// run.
type plannedExperiment struct {
	design.Experiment
	shard *plan.Shard
	dir   string
	// file and hypotheses name the files read, "(built in)" when they are
	// loadlab's own.
	file, hypotheses string
}

func runExperiment(args []string, stdout io.Writer) error {
	fs, parse := newFlagSet("experiment", experimentSynopsis, stdout)
	var o experimentOptions
	o.bind(fs)
	if err := parse(args); err != nil {
		return err
	}
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains(resumeFlags, f.Name) {
			o.notResumed = append(o.notResumed, "--"+f.Name)
		}
	})
	if o.starter.init {
		return o.writeStarter(stdout)
	} else if o.starter.pipeline != "" || len(o.starter.probes.M) > 0 {
		return usageErr("experiment: --pipeline and --probe go with --init (a starter experiment); an experiment file names its own pipeline")
	}
	if o.calibrationPairs >= 0 {
		o.overrides.CalibrationPairs = &o.calibrationPairs
	}
	if o.maxBias != 0 {
		o.overrides.MaxBias = &o.maxBias
	}
	if err := o.continuing(); err != nil {
		return err
	}
	if err := o.fromLog(); err != nil {
		return err
	}
	if o.jsonLines {
		o.lines = resultsfile.NewLineWriter(stdout)
	}
	for flagName, v := range map[string]string{"--target": o.target, "--real-time-target": o.realTimeTarget} {
		if err := checkURL("experiment", flagName, v); err != nil {
			return err
		}
	}
	pe, err := o.load()
	if err != nil {
		return err
	}
	ctx, reg, done, err := begin(o.metricsAddr, nil)
	if err != nil {
		return err
	}
	defer done()
	o.announce(pe)
	res, err := o.execute(ctx, pe, reg, stdout)
	if err != nil || o.calibration.Only {
		o.dash.End(err, "")
		return err
	}
	o.live.Final(res)
	err = o.finish(pe, res, stdout)
	o.dash.End(err, pe.dir)
	return err
}

// load reads the experiment's files and checks every option before
// anything runs, the results folder included.
func (o *experimentOptions) load() (plannedExperiment, error) {
	var pe plannedExperiment
	var ef, hf design.Files
	var file, hyp string
	ef, file, pe.file = builtIn(o.file, experiments.Replication, defaultExperiment)
	hf, hyp, pe.hypotheses = builtIn(o.hypotheses, experiments.ReplicationHypotheses, defaultHypotheses)
	exp, err := design.LoadFrom(ef, hf, file, hyp, o.overrides)
	var fe *design.FileError
	if err != nil && o.file != "" && o.hypotheses == "" && errors.As(err, &fe) && fe.File == hyp {
		return pe, usageErr("%v\n(those are the replication's hypotheses, built into loadlab, of its cells: give your experiment's with --hypotheses FILE; loadlab experiment --init writes a starter pair for your own services)", experimentFlags.Rename(err))
	}
	if err != nil {
		return pe, usageErr("%v", experimentFlags.Rename(err))
	}
	pe.Experiment = exp
	if exp.Spec.Own != nil && (o.target != "" || o.realTimeTarget != "") {
		return pe, usageErr("experiment: --target, --real-time-target: an experiment on one's own services runs against virtual copies of them, which it starts itself")
	}
	if o.shard.Count > 0 {
		if err := plan.CheckShardable(exp.Spec, o.shard); err != nil {
			return pe, usageErr("experiment: %v", experimentFlags.Rename(err))
		}
		pe.shard = &o.shard
	}
	pe.dir = o.out
	if pe.dir == "" {
		pe.dir = filepath.Join("results", fmt.Sprintf("%s-%s", exp.Spec.Name, time.Now().Format("20060102-150405")))
		if pe.shard != nil {
			pe.dir += fmt.Sprintf("-shard-%d-of-%d", pe.shard.Index, pe.shard.Count)
		}
	}
	if o.calibration.Only {
		pe.dir = "" // nothing is written
		return pe, nil
	}
	// The folder must take the results before hours of runs, not after. A
	// shard's must not hold an earlier run's results: a shard that then
	// died before writing its own would merge as complete.
	held := runlog.Held(pe.dir)
	switch {
	case held != "" && o.log == nil && pe.shard != nil:
		return pe, usageErr("experiment: --out: %s already holds %s: a shard writes into an empty folder, so that a shard that fails cannot be merged as the old one; "+
			"loadlab experiment --resume %s finishes an interrupted one, or remove it or choose another", pe.dir, held, pe.dir)
	case held != "" && o.log == nil && !o.force:
		return pe, usageErr("experiment: --out: %s already holds %s: loadlab experiment --resume %s finishes an interrupted run; "+
			"else choose another folder, or give --force to replace them", pe.dir, held, pe.dir)
	}
	if err := writable(pe.dir); err != nil {
		return pe, usageErr("--out: %v", err)
	}
	return pe, nil
}

// builtIn says where a file is read: from disk when given, else the file
// name built into loadlab; and how the results name it.
func builtIn(given, name, repoPath string) (files design.Files, path, shown string) {
	if given != "" {
		return design.OS, given, given
	}
	return experiments.Files, name, repoPath + " (built in)"
}

// announce says on stderr, first, where the results and the run log go
// and how a stopped experiment is finished; then what it is and where it
// runs.
func (o *experimentOptions) announce(pe plannedExperiment) {
	if pe.dir != "" {
		for _, line := range runlog.Announce(pe.dir, o.reach(), o.log, o.out == "" && pe.shard == nil, pe.Spec.Name) {
			fmt.Fprintln(os.Stderr, "loadlab experiment: "+line)
		}
	}
	fmt.Fprintf(os.Stderr, "loadlab experiment: %s with %s\n", pe.file, pe.hypotheses)
	rt := cpulimit.ReadRuntime()
	fmt.Fprintf(os.Stderr, "loadlab experiment: GOMAXPROCS %d, NumCPU %d, CPU quota %s; %d cells × %d runs\n",
		rt.GOMAXPROCS, rt.NumCPU, rt.Quota(), len(pe.Spec.Cells()), pe.Spec.Runs)
	if why := pe.Exploratory(); why != "" {
		fmt.Fprintf(os.Stderr, "loadlab experiment: EXPLORATORY, %s: the verdicts will be computed, and are not findings\n", why)
	}
}

// execute starts the mock service unless one is given, and runs the
// experiment against it. With --calibration-only it prints the
// calibration instead of returning results.
func (o *experimentOptions) execute(ctx context.Context, pe plannedExperiment, reg prometheus.Registerer, stdout io.Writer) (*resultsfile.Results, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	mockCfg := pe.Spec.MockConfig()
	mock, err := startExperimentMock(o.target, bin, pe.Spec, mockCfg)
	if err != nil {
		return nil, err
	}
	defer mock.stop()
	cfg := runner.Config{Spec: pe.Spec, Hypotheses: pe.Hypotheses, Lock: pe.Lock, ExperimentFile: pe.file, HypothesesFile: pe.hypotheses,
		ExperimentSHA256: pe.SpecSHA256,
		Binary:           bin, Target: mock.url,
		AdminToken: o.adminToken, MockConfig: mockCfg, Wait: o.wait, Calibration: o.calibration, Shard: pe.shard,
		Mocks: inProcessMocks{}, Copies: inProcessCopies{}, Restarter: mock.restarter, Journal: o.journal(pe)}
	if o.log != nil {
		cfg.Resume = &o.log.Resume
	}
	if o.realTimeTarget != "" {
		cfg.Mocks = runningMock(o.realTimeTarget)
	}
	progress := runner.Progresses{runner.NewPrinter(os.Stderr, isTerminal(os.Stderr))}
	if o.lines != nil {
		progress = append(progress, runLines{lines: o.lines, shard: pe.shard})
	}
	if reg != nil {
		progress = append(progress, runner.NewMetrics(reg))
	}
	if o.dash, err = dashboard.Serve(o.ui, o.uiKeep, "experiment", "Experiment "+pe.Spec.Name, os.Stderr); err != nil {
		return nil, err
	} else if o.dash != nil {
		units := plan.Units(pe.Spec)
		if pe.shard != nil {
			units = plan.ShardUnits(pe.Spec, *pe.shard, mockCfg)
		}
		o.live = dashboard.NewExperimentProgress(o.dash, pe.Spec, pe.Hypotheses, pe.Lock, units, mockCfg)
		if o.log != nil {
			o.live.Logged(o.log.Resume.Runs)
		}
		progress = append(progress, o.live)
	}
	r, err := runner.New(cfg, progress)
	if err != nil {
		return nil, runnerError(err)
	}
	res, err := r.Run(ctx)
	o.stopped = err
	switch {
	case err != nil && res == nil && errors.Is(err, context.Canceled):
		return nil, err // interrupted before the first run: nothing to write
	case err != nil && res == nil && errors.Is(err, runner.ErrJournal):
		return nil, &cli.ExitError{Code: exitFailed, Err: err}
	case err != nil && res == nil:
		return nil, runnerError(err) // the mock service was unfit or did not answer: nothing ran
	case o.calibration.Only:
		if problem := runner.WriteCalibration(stdout, res.TimeScaleBias); problem != "" {
			return res, &cli.ExitError{Code: exitFailed, Err: fmt.Errorf("calibration: %s", problem)}
		}
		return res, nil
	}
	return res, nil
}

// runnerError is an error of the runner before any run, as bad input (exit
// 2), with the flag that mends it where there is one.
func runnerError(err error) error {
	switch {
	case errors.Is(err, runner.ErrNotMock):
		return usageErr("%v (a mock service run with --instances serves each instance under /i/K: give --target BASE/i/K)", err)
	case errors.Is(err, runner.ErrAdmin):
		return usageErr("%v (give --admin-token)", err)
	case errors.Is(err, runner.ErrCannotRestart):
		return usageErr("%v (run without --target: the runner starts its own)", err)
	case errors.Is(err, runner.ErrNotSameExperiment):
		return usageErr("%v: nothing ran; restore what it began with, or run the experiment into a folder of its own", err)
	}
	return usageErr("%v", experimentFlags.Rename(err))
}

// finish writes the results folder (and the results line of --json-lines),
// prints the summary, and says how the experiment ended.
func (o *experimentOptions) finish(pe plannedExperiment, res *resultsfile.Results, stdout io.Writer) error {
	werr := report.WriteOutputs(pe.dir, res)
	files := fmt.Sprintf("%s, %s and %s", filepath.Join(pe.dir, "results.json"), filepath.Join(pe.dir, "report.md"), filepath.Join(pe.dir, "report.html"))
	if o.lines != nil {
		// Everything on stderr first, the results line last: a container
		// log splits a long line into chunks, and a line from the other
		// stream between them would break it. This makes that rarer, not
		// impossible (the engine reads the two streams apart): where the
		// log can, read the standard output alone. The line is written even
		// when the folder could not be: the results are then in the log
		// alone.
		if werr != nil {
			fmt.Fprintf(os.Stderr, "loadlab experiment: %s: %v; the results are in the last JSON line only\n", pe.dir, werr)
		} else {
			fmt.Fprintf(os.Stderr, "loadlab experiment: wrote %s\n", files)
		}
		o.lines.Write(resultsfile.KindResults, pe.shard, res)
		if err := o.lines.Err(); err != nil {
			return fmt.Errorf("experiment: --json-lines: %w", err)
		}
	}
	if werr != nil {
		return o.unwritten(pe, werr)
	}
	if o.lines == nil {
		report.WriteSummary(stdout, res)
		fmt.Fprintf(stdout, "\nWrote %s\n", files)
	}
	if res.Partial != "" {
		return o.unfinished(pe, res)
	}
	return outcome(res)
}
