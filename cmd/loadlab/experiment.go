package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments"
	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/config"
)

const (
	defaultExperiment = "experiments/replication.yaml"
	defaultHypotheses = "experiments/hypotheses-v3.yaml"
)

func runExperiment(args []string, stdout io.Writer) error {
	fs, parse := newFlagSet("experiment",
		"Runs the experiment matrix: every strategy × scenario × client CPU setting, several runs per cell, each\n"+
			"client run a child process under a real CPU limit (a cgroup quota where the machine allows it, else CPU\n"+
			"affinity), against the mock service (in-process on loopback unless --target). Judges the preregistered\n"+
			"hypotheses and writes results.json, report.md and report.html. Run k of every cell uses the mock service's\n"+
			"seed + k; before each reset the runner waits for the mock service to go quiet (else the run is\n"+
			"contaminated), and after each run it reconciles the client's figures with the server's (else invalid).\n"+
			"Only valid runs count; a cell short of them is inconclusive (insufficient runs). A run whose --runs,\n"+
			"--records, --time-scale or cells differ from the design the hypotheses were locked with is exploratory.\n\n"+
			"Scenarios are the mock service's profiles (healthy, slow-enrichment, slow-write) or phased scenarios whose\n"+
			"conditions change during a run (experiments/conditions.yaml; built in: write-capacity-drop, the system of\n"+
			"record down to 2 workers and 2 queue slots for 20 lab s; enrichment-brownout, enrichment at the slow profile's\n"+
			"1.2 s median with hangs for 20 lab s; each with 10 lab s of health before and after). Their runs are\n"+
			"time-bounded (the file's duration); at each phase's start the runner changes the mock service's live settings,\n"+
			"the network faults between client and mock service (an in-process proxy per dependency), or restarts the mock\n"+
			"service (then run as a process of its own with its store in a temporary directory). See the README.\n\n"+
			"On several machines: --shard i/n runs part i of n of the matrix (see loadlab merge, and the README's \"On\n"+
			"Kubernetes\"); --json-lines prints every run and then the results as JSON lines, for a pod's log.\n\n"+
			"Exit codes: 0 every run valid; 1 some runs failed, contaminated or invalid (listed in the report); 2 bad input, or a mock\n"+
			"service that is not a loadlab mock, runs at another time scale, refuses its admin routes or does not\n"+
			"answer (nothing ran); 130 interrupted (SIGINT or SIGTERM): the results of the completed runs are\n"+
			"written, marked PARTIAL.\n", stdout)
	file := fs.String("file", defaultExperiment, "experiment file")
	hyp := fs.String("hypotheses", defaultHypotheses, "preregistered hypotheses (must match their lock; see loadlab preregister)")
	out := fs.String("out", "", "results folder (default results/NAME-YYYYMMDD-HHMMSS)")
	target := fs.String("target", "", "base URL of a running mock service (default: start one in-process)")
	token := fs.String("admin-token", "", "bearer token of the mock service's admin routes")
	scale := fs.Float64("time-scale", 0, "override the file's time scale")
	runs := fs.Int("runs", 0, "override the file's runs per cell")
	nRecords := fs.Int("records", 0, "override the file's records per run")
	wait := fs.Duration("wait", 0, "wait up to this long for the mock service to answer (e.g. 60s when it starts alongside)")
	metricsAddr := fs.String("metrics-listen", "", "serve the runner's Prometheus metrics on this address (e.g. 0.0.0.0:9090)")
	calRuns := fs.Int("calibration-runs", experiments.DefaultCalibrationRuns, "rounds of the time-scale calibration: its strategies, healthy, at time scale 1 and at the experiment's,\non mock services of their own, before the matrix; 0 skips it (the report then says the bias is not measured)")
	calStrategies := fs.String("calibration-strategies", strings.Join(experiments.DefaultCalibrationStrategies, ","), "comma-separated strategies the calibration measures (C1, C2, C3, C4, or any --strategy of loadlab run)")
	maxBias := fs.Float64("max-bias", experiments.DefaultMaxBias, "largest time-scale bias (a fraction of the rate at time scale 1) under which the experiment judges")
	acceptBias := fs.Bool("accept-bias", false, "judge even when a time-scale bias exceeds --max-bias; the report says so")
	shardFlag := fs.String("shard", "", "run only part i of n of the matrix (i from 0, like a Kubernetes Indexed Job's\n"+
		"JOB_COMPLETION_INDEX): every run of every cell goes to one shard, balanced by expected duration, run k\n"+
		"keeping its seed; the results folder is partial, saying so, until loadlab merge combines the n shards")
	jsonLines := fs.Bool("json-lines", false, "print JSON lines on stdout instead of the summary: {\"kind\":\"run\",...} as each run ends,\n"+
		"then {\"kind\":\"results\",...} with the whole results.json (loadlab merge reads such a log: kubectl logs)")
	calOnly := fs.Bool("calibration-only", false, "run the time-scale calibration alone, print it and exit (0 within --max-bias, 1 beyond):\nwhich time scale can this machine run the experiment at?")
	if err := parse(args); err != nil {
		return err
	}
	spec, err := experiments.LoadSpec(*file)
	if err != nil {
		return usageErr("%v", err)
	}
	if *scale != 0 {
		spec.TimeScale = *scale
	}
	if *runs != 0 {
		spec.Runs = *runs
	}
	if *nRecords != 0 {
		spec.Records = *nRecords
	}
	if err := spec.Validate(); err != nil {
		return usageErr("%v", err)
	}
	var shard *experiments.Shard
	if *shardFlag != "" {
		sh, err := experiments.ParseShard(*shardFlag)
		if err != nil {
			return usageErr("--shard %v", err)
		}
		if err := spec.CheckShardable(sh); err != nil {
			return usageErr("%v", err)
		}
		shard = &sh
	}
	var calNames []string
	for _, name := range strings.Split(*calStrategies, ",") {
		name = strings.TrimSpace(name)
		if _, err := records.ParseStrategy(name); err != nil {
			return usageErr("--calibration-strategies: %v", err)
		}
		calNames = append(calNames, name)
	}
	hs, err := experiments.LoadHypotheses(*hyp, spec)
	if err != nil {
		return usageErr("%v", err)
	}
	lock, err := experiments.CheckLock(*hyp)
	if err != nil {
		return usageErr("refusing to judge: %v", err)
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("results", fmt.Sprintf("%s-%s", spec.Name, time.Now().Format("20060102-150405")))
		if shard != nil {
			dir += fmt.Sprintf("-shard-%d-of-%d", shard.Index, shard.Count)
		}
	}
	// The folder must take the results before hours of runs, not after.
	if !*calOnly {
		// A shard's folder must not hold an earlier run's results: a shard
		// that then died before writing its own would merge as complete.
		if _, err := os.Stat(filepath.Join(dir, "results.json")); shard != nil && err == nil {
			return usageErr("--out: %s already holds a results.json (of an earlier run?): a shard writes into an empty folder, so that a shard that fails cannot be merged as the old one; remove it or choose another", dir)
		}
		if err := writable(dir); err != nil {
			return usageErr("--out: %v", err)
		}
	}
	ctx, reg, done, err := begin(*metricsAddr, nil)
	if err != nil {
		return err
	}
	defer done()
	rt := cpulimit.ReadRuntime()
	fmt.Fprintf(os.Stderr, "loadlab experiment: GOMAXPROCS %d, NumCPU %d, CPU quota %s; %d cells × %d runs\n",
		rt.GOMAXPROCS, rt.NumCPU, rt.Quota(), len(spec.Cells()), spec.Runs)
	if len(hs) > 0 {
		if why := experiments.Exploratory(lock, spec, hs[0].Rules); why != "" {
			fmt.Fprintf(os.Stderr, "loadlab experiment: EXPLORATORY, %s: the verdicts will be computed, and are not findings\n", why)
		}
	}
	// The mock service: the one at --target, or one of our own on loopback
	// with the experiment's seed and time scale.
	mockCfg := config.Default()
	mockCfg.Seed, mockCfg.TimeScale = spec.Seed, spec.TimeScale
	// An experiment with phased scenarios runs its own mock service as a
	// process of its own with a store in a temporary directory, so that a
	// restart keeps every acknowledged write; the steady-state matrix keeps
	// the in-process, in-memory one its committed results were measured
	// with.
	url := *target
	var restart func(context.Context, string, uint32) (string, error)
	switch {
	case url == "" && spec.HasPhased():
		mp, err := experiments.StartMockProcess(bin, mockCfg)
		if err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
		defer mp.Stop()
		url, restart = mp.URL, mp.Restart
		fmt.Fprintf(os.Stderr, "loadlab experiment: mock service at %s, a process of its own with its store in %s\n", url, mp.Dir)
	case url == "":
		mockCfg.Listen = "127.0.0.1:0"
		_, u, stop, err := mockservice.Start(mockCfg)
		if err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
		defer stop()
		url = u
	}
	r := &experiments.Runner{Spec: spec, Hypotheses: hs, Binary: bin, Target: url, AdminToken: *token,
		MockConfig: &mockCfg, Progress: progressPrinter(os.Stderr), Wait: *wait,
		CalibrationRuns: *calRuns, CalibrationStrategies: calNames, MaxBias: *maxBias, AcceptBias: *acceptBias, StartMock: startInProcessMock,
		CalibrateOnly: *calOnly, Lock: lock, Restart: restart, Shard: shard}
	var lines *jsonLineWriter
	if *jsonLines {
		lines = &jsonLineWriter{w: stdout}
		r.RunDone = func(rec experiments.RunRecord) { lines.write("run", shard, rec) }
	}
	if reg != nil {
		r.Metrics = experiments.NewRunnerMetrics(reg)
	}
	res, err := r.Run(ctx)
	if err != nil && res == nil {
		if errors.Is(err, context.Canceled) {
			return err // interrupted before the first run: nothing to write
		}
		return usageErr("%v", err) // the mock service was unfit or did not answer: nothing ran
	}
	if *calOnly {
		return printCalibration(stdout, res.Calibration)
	}
	res.ExperimentFile, res.HypothesesFile, res.Lock = *file, *hyp, lock
	res.ExperimentSHA256, _ = experiments.FileSHA256(*file)
	res.HypothesesSHA256 = lock.SHA256
	werr := experiments.WriteOutputs(dir, res)
	if lines != nil {
		// Everything on stderr first, the results line last: a pod's log
		// splits a long line into chunks, and a line from the other stream
		// between them would break it. The line is written even when the
		// folder could not be: the results are then in the log alone.
		if werr != nil {
			fmt.Fprintf(os.Stderr, "loadlab experiment: %s: %v; the results are in the last JSON line only\n", dir, werr)
		} else {
			fmt.Fprintf(os.Stderr, "loadlab experiment: wrote %s, %s and %s\n", filepath.Join(dir, "results.json"), filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"))
		}
		lines.write("results", shard, res)
		if lines.err != nil {
			return fmt.Errorf("experiment: --json-lines: %w", lines.err)
		}
	}
	if werr != nil {
		return werr
	}
	if lines == nil {
		printSummary(stdout, res)
		fmt.Fprintf(stdout, "\nWrote %s, %s and %s\n", filepath.Join(dir, "results.json"), filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"))
	}
	if res.Partial != "" {
		return interrupted(fmt.Errorf("experiment: %s", res.Partial))
	}
	failed := 0
	for _, run := range res.Runs {
		if !run.Valid() {
			failed++
		}
	}
	if failed > 0 {
		return &exitError{code: exitFailed, err: fmt.Errorf("experiment: %d of %d runs were not valid: failed, contaminated or invalid (listed in the report)", failed, len(res.Runs))}
	}
	return nil
}

// startInProcessMock serves a mock service in-process on loopback, for the
// calibration.
func startInProcessMock(cfg config.Config) (string, func() error, error) {
	cfg.Listen = "127.0.0.1:0"
	_, url, stop, err := mockservice.Start(cfg)
	return url, stop, err
}

// progressPrinter draws a bar on a terminal (runs done of all, the current
// cell, time left) and one plain line per finished run otherwise.
func progressPrinter(w *os.File) func(experiments.Progress) {
	if isTerminal(w) {
		var bar *progressbar.ProgressBar
		return func(p experiments.Progress) {
			if p.Advising != "" {
				fmt.Fprintf(w, "\rprobing %s for the advised strategy ", p.Advising)
				return
			}
			if p.Calibrating {
				fmt.Fprintf(w, "\rcalibrating the time scale: round %d of %d ", p.Done, p.Total)
				return
			}
			if bar == nil {
				bar = progressbar.NewOptions(p.Total, progressbar.OptionSetWriter(w), progressbar.OptionSetWidth(30),
					progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionSetItsString("runs"),
					progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
			}
			bar.Describe(fmt.Sprintf("%s run %d", p.Cell, p.Run))
			_ = bar.Set(p.Done)
		}
	}
	return func(p experiments.Progress) {
		if p.Advising != "" {
			fmt.Fprintf(w, "probing %s for the advised strategy\n", p.Advising)
			return
		}
		if p.Calibrating {
			fmt.Fprintf(w, "calibrating the time scale: round %d of %d done\n", p.Done, p.Total)
			return
		}
		if p.Last == nil {
			return
		}
		left := "?"
		if p.Done > 0 {
			per := p.Elapsed / time.Duration(p.Done)
			left = (per * time.Duration(p.Total-p.Done)).Round(time.Second).String()
		}
		status := p.Last.Status
		if !p.Last.Valid() {
			status = strings.ToUpper(p.Last.Status) + ": " + p.Last.Reason
		} else if m := p.Last.Metrics; m != nil {
			status = fmt.Sprintf("%.2f accepted/s, %.0f write 503s", m["accepted_per_second"], m["write_rejections"])
		}
		fmt.Fprintf(w, "%d/%d %s run %d: %s (~%s left)\n", p.Done, p.Total, p.Cell, p.Run, status, left)
	}
}

func printSummary(w io.Writer, res *experiments.Results) {
	var md strings.Builder
	experiments.WriteMarkdown(&md, res)
	fmt.Fprint(w, md.String())
}

// printCalibration prints the calibration's table and what it means; a bias
// beyond the limit exits 1.
func printCalibration(w io.Writer, c *experiments.Calibration) error {
	if c.Skipped != "" {
		fmt.Fprintf(w, "Time-scale bias not measured: %s\n", c.Skipped)
		return nil
	}
	fmt.Fprintf(w, "Accepted records per lab second, healthy, %s, median (min–max) of %d runs:\n\n", c.CPU, c.Runs)
	fmt.Fprintf(w, "%-8s  %-24s  %-24s  %s\n", "strategy", "at time scale 1", fmt.Sprintf("at time scale %g", c.TimeScale), "bias")
	for _, s := range c.Strategies {
		if s.Unmeasured {
			fmt.Fprintf(w, "%-8s  not measured: %s\n", s.Strategy, strings.Join(s.Failed, "; "))
			continue
		}
		fmt.Fprintf(w, "%-8s  %-24s  %-24s  %+.1f%%\n", s.Strategy, fmtStat(s.AtOne), fmtStat(s.AtScale), 100*s.Bias)
	}
	if why := c.Exceeded(); why != "" {
		return &exitError{code: exitFailed, err: fmt.Errorf("calibration: %s", why)}
	}
	fmt.Fprintf(w, "\nEvery bias is within %.1f%%.\n", 100*c.MaxBias)
	return nil
}

func fmtStat(s experiments.Stat) string {
	return fmt.Sprintf("%.2f (%.2f–%.2f)", s.Median, s.Min, s.Max)
}
