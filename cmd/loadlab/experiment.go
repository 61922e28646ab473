package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/loadlab/loadlab/client"
	"github.com/loadlab/loadlab/experiments"
)

const (
	defaultExperiment = "experiments/replication.yaml"
	defaultHypotheses = "experiments/hypotheses.yaml"
)

func runExperiment(args []string, stdout io.Writer) error {
	fs, parse := newFlagSet("experiment",
		"Runs the experiment matrix: every strategy × scenario × client CPU setting, several runs per cell, each\n"+
			"client run a child process under a real CPU limit (a cgroup quota where the machine allows it, else CPU\n"+
			"affinity), against the mock service (in-process on loopback unless --target). Judges the preregistered\n"+
			"hypotheses and writes results.json, report.md and report.html.\n", stdout)
	file := fs.String("file", defaultExperiment, "experiment file")
	hyp := fs.String("hypotheses", defaultHypotheses, "preregistered hypotheses (must match their lock; see loadlab preregister)")
	out := fs.String("out", "", "results folder (default results/NAME-YYYYMMDD-HHMMSS)")
	target := fs.String("target", "", "base URL of a running mock service (default: start one in-process)")
	token := fs.String("admin-token", "", "bearer token of the mock service's admin routes")
	scale := fs.Float64("time-scale", 0, "override the file's time scale")
	runs := fs.Int("runs", 0, "override the file's runs per cell")
	records := fs.Int("records", 0, "override the file's records per run")
	wait := fs.Duration("wait", 0, "wait up to this long for the mock service to answer (e.g. 60s when it starts alongside)")
	metricsAddr := fs.String("metrics-listen", "", "serve the runner's Prometheus metrics on this address (e.g. 0.0.0.0:9090)")
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
	if *records != 0 {
		spec.Records = *records
	}
	if err := spec.Validate(); err != nil {
		return usageErr("%v", err)
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
	}
	ctx, reg, done, err := begin(*metricsAddr)
	if err != nil {
		return err
	}
	defer done()
	rt := client.ReadRuntime()
	quota := "none"
	if rt.CPUQuota != nil {
		quota = fmt.Sprintf("%g CPUs (%s)", *rt.CPUQuota, rt.QuotaSource)
	}
	fmt.Fprintf(os.Stderr, "loadlab experiment: GOMAXPROCS %d, NumCPU %d, CPU quota %s; %d cells × %d runs\n",
		rt.GOMAXPROCS, rt.NumCPU, quota, len(spec.Cells()), spec.Runs)
	r := &experiments.Runner{Spec: spec, Hypotheses: hs, Binary: bin, Target: *target, AdminToken: *token,
		Progress: progressPrinter(os.Stderr), Wait: *wait}
	if reg != nil {
		if r.Metrics, err = experiments.NewRunnerMetrics(reg); err != nil {
			return err
		}
	}
	res, err := r.Run(ctx)
	if errors.Is(err, experiments.ErrMismatch) {
		return usageErr("%v", err)
	}
	if err != nil && res == nil {
		return err
	}
	res.ExperimentFile, res.HypothesesFile, res.Lock = *file, *hyp, lock
	res.ExperimentSHA256, _ = experiments.FileSHA256(*file)
	res.HypothesesSHA256 = lock.SHA256
	if werr := experiments.WriteOutputs(dir, res); werr != nil {
		return werr
	}
	printSummary(stdout, res)
	fmt.Fprintf(stdout, "\nWrote %s, %s and %s\n", filepath.Join(dir, "results.json"), filepath.Join(dir, "report.md"), filepath.Join(dir, "report.html"))
	return err
}

// progressPrinter draws a bar on a terminal and plain lines otherwise.
func progressPrinter(w *os.File) func(experiments.Progress) {
	tty := isTerminal(w)
	return func(p experiments.Progress) {
		left := "?"
		if p.Done > 0 {
			per := p.Elapsed / time.Duration(p.Done)
			left = (per * time.Duration(p.Total-p.Done)).Round(time.Second).String()
		}
		if tty {
			const width = 30
			filled := width * p.Done / max(p.Total, 1)
			fmt.Fprintf(w, "\r[%s%s] %d/%d runs  %s run %d  ~%s left   ", strings.Repeat("#", filled),
				strings.Repeat(".", width-filled), p.Done, p.Total, p.Cell, p.Run, left)
			if p.Done == p.Total && p.Last != nil {
				fmt.Fprintln(w)
			}
			return
		}
		if p.Last == nil {
			return
		}
		status := "ok"
		if p.Last.Failed != "" {
			status = "FAILED: " + p.Last.Failed
		} else if m := p.Last.Metrics; m != nil {
			status = fmt.Sprintf("%.2f accepted/s, %.0f write 503s", m["accepted_per_second"], m["write_rejections"])
		}
		fmt.Fprintf(w, "%d/%d %s run %d: %s (~%s left)\n", p.Done, p.Total, p.Cell, p.Run, status, left)
	}
}

// begin returns the context of a command that SIGTERM or Ctrl-C cancels,
// and the Registerer served on metricsAddr (nil when empty); done undoes
// both.
func begin(metricsAddr string) (context.Context, prometheus.Registerer, func(), error) {
	reg, stopMetrics, err := serveMetrics(metricsAddr)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return ctx, reg, func() { stop(); stopMetrics() }, nil
}

// serveMetrics serves a fresh registry (with Go and process collectors)
// on addr until the returned stop is called. An empty addr serves nothing
// and returns a nil Registerer.
func serveMetrics(addr string) (prometheus.Registerer, func(), error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, usageErr("metrics-listen: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return reg, func() { _ = srv.Close() }, nil
}

func printSummary(w io.Writer, res *experiments.Results) {
	var md strings.Builder
	experiments.WriteMarkdown(&md, res)
	fmt.Fprint(w, md.String())
}

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
	verdicts := experiments.Judge(res.Hypotheses, res.Runs)
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
		return &exitError{code: 1, err: errors.New("check: verdicts differ from the stored ones")}
	}
	fmt.Fprintf(stdout, "hypotheses SHA-256 %s; %d verdicts match the stored ones\n", res.HypothesesSHA256, len(verdicts))
	return nil
}
