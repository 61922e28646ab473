package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/experiments/runner"
	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/config"
)

// experimentMock is the mock service an experiment runs against.
type experimentMock struct {
	url       string
	restarter runner.Restarter // nil: it cannot be restarted
	stop      func()
}

// startExperimentMock is the mock service at target, or, without one, a
// mock service of our own on loopback with the experiment's seed and time
// scale. An experiment with phased scenarios gets one as a process of its
// own with a store in a temporary directory, so that a restart keeps every
// acknowledged write; the steady-state matrix keeps the in-process,
// in-memory one its committed results were measured with.
func startExperimentMock(target, bin string, spec design.Spec, cfg config.Config) (experimentMock, error) {
	switch {
	case target != "":
		return experimentMock{url: target, stop: func() {}}, nil
	case spec.HasPhased():
		mp, err := runner.StartMockProcess(bin, cfg)
		if err != nil {
			return experimentMock{}, fmt.Errorf("experiment: %w", err)
		}
		fmt.Fprintf(os.Stderr, "loadlab experiment: mock service at %s, a process of its own with its store in %s\n", mp.URL, mp.Dir)
		return experimentMock{url: mp.URL, restarter: mp, stop: func() { _ = mp.Stop() }}, nil
	}
	url, stop, err := inProcessMocks{}.StartMock(cfg)
	if err != nil {
		return experimentMock{}, fmt.Errorf("experiment: %w", err)
	}
	return experimentMock{url: url, stop: func() { _ = stop() }}, nil
}

// inProcessMocks serves mock services in this process on loopback, for
// the calibration.
type inProcessMocks struct{}

func (inProcessMocks) StartMock(cfg config.Config) (string, func() error, error) {
	cfg.Listen = "127.0.0.1:0"
	_, url, stop, err := mockservice.Start(cfg)
	return url, stop, err
}

// runningMock is a mock service already running (--real-time-target):
// StartMock gives its address, and stopping it stops nothing.
type runningMock string

func (m runningMock) StartMock(config.Config) (string, func() error, error) {
	return string(m), func() error { return nil }, nil
}

// runLines prints each run as a JSON line as it ends (--json-lines).
type runLines struct {
	runner.NoProgress
	lines *jsonLineWriter
	shard *plan.Shard
}

func (l runLines) RunDone(rec judge.RunRecord, _, _ int, _ time.Duration) {
	l.lines.write("run", l.shard, rec)
}

// newProgressPrinter draws a bar on a terminal (runs done of all, the
// current cell, time left) and one plain line per finished run otherwise.
func newProgressPrinter(w *os.File) runner.Progress {
	return &progressPrinter{w: w, terminal: isTerminal(w)}
}

// progressPrinter is the experiment's progress on stderr.
type progressPrinter struct {
	w        io.Writer
	terminal bool
	bar      *progressbar.ProgressBar
}

// BiasMeasured says a calibrated cell's bias the moment it is measured,
// and, beyond the limit or unresolved, what it will do and how to stop or
// accept it.
func (p *progressPrinter) BiasMeasured(m judge.CellBias, limit float64) {
	if p.terminal {
		fmt.Fprintln(p.w)
	}
	fmt.Fprintf(p.w, "time-scale bias of %s: %s\n", m.Cell, biasLine(m, limit))
	switch m.State {
	case judge.BiasBeyond:
		fmt.Fprintf(p.w, "  the verdicts on its rates and durations that a bias in this interval could change will be inconclusive:\n"+
			"  stop with Ctrl-C, run again with --accept-bias, or accept it after the run with loadlab check --accept-bias DIR\n")
	case judge.BiasUnresolved:
		fmt.Fprintf(p.w, "  the verdicts on its rates and durations that a bias in this interval could change will be provisional (exit 1):\n"+
			"  --accept-uncalibrated makes them final\n")
	case judge.BiasUnmeasured:
		fmt.Fprintf(p.w, "  the verdicts on its rates and durations will be provisional (exit 1): --accept-uncalibrated makes them final\n")
	}
}

// biasLine is a cell's bias, its interval and its state against the limit.
func biasLine(m judge.CellBias, limit float64) string {
	state := map[judge.BiasState]string{judge.BiasWithin: "within", judge.BiasBeyond: "BEYOND", judge.BiasUnresolved: "UNRESOLVED against",
		judge.BiasUnmeasured: "NOT MEASURED against"}[m.State]
	if len(m.Ratios) == 0 {
		return fmt.Sprintf("%s ±%.1f%% (no valid pair)", state, 100*limit)
	}
	iv := "no interval from one pair"
	if m.Interval != nil {
		iv = fmt.Sprintf("[%+.1f%%, %+.1f%%], %.2f%% coverage", 100*m.Interval.Lo, 100*m.Interval.Hi, 100*m.Interval.Coverage)
	}
	return fmt.Sprintf("%+.1f%% (%s; %d pairs): %s ±%.1f%%", 100*m.Bias, iv, len(m.Ratios), state, 100*limit)
}

func (p *progressPrinter) Advising(scenario, dependency string) {
	if p.terminal {
		fmt.Fprintf(p.w, "\rprobing %s/%s for the advised strategy ", scenario, dependency)
		return
	}
	fmt.Fprintf(p.w, "probing %s/%s for the advised strategy\n", scenario, dependency)
}

func (p *progressPrinter) RunStarting(u plan.Unit, done, total int, _ time.Duration) {
	if p.terminal {
		p.barAt(u, done, total)
	}
}

func (p *progressPrinter) RunDone(rec judge.RunRecord, done, total int, elapsed time.Duration) {
	if p.terminal {
		p.barAt(plan.Unit{Cell: rec.Cell, Run: rec.Run}, done, total)
		return
	}
	left := "?"
	if done > 0 {
		per := elapsed / time.Duration(done)
		left = (per * time.Duration(total-done)).Round(time.Second).String()
	}
	status := string(rec.Status)
	if !rec.Valid() {
		status = strings.ToUpper(status) + ": " + rec.Reason
	} else if m := rec.Metrics; m != nil {
		status = fmt.Sprintf("%.2f accepted/s, %.0f write 503s", m["accepted_per_second"], m["write_rejections"])
	}
	fmt.Fprintf(p.w, "%d/%d %s run %d: %s (~%s left)\n", done, total, rec.Cell, rec.Run, status, left)
}

// barAt moves the bar to done of total, naming the unit.
func (p *progressPrinter) barAt(u plan.Unit, done, total int) {
	if p.bar == nil {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w), progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionSetItsString("runs"),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }))
	}
	p.bar.Describe(fmt.Sprintf("%s run %d", u.Cell, u.Run))
	_ = p.bar.Set(done)
}

func printSummary(w io.Writer, res *judge.Results) {
	var md strings.Builder
	report.WriteMarkdown(&md, res)
	fmt.Fprint(w, md.String())
}

// printCalibration prints each calibrated cell's bias and what it means;
// a bias that is not within the limit, or a calibration that did not
// complete, exits 1.
func printCalibration(w io.Writer, b *judge.Bias) error {
	if b.Skipped != "" {
		fmt.Fprintf(w, "Time-scale bias not measured: %s\n", b.Skipped)
		return nil
	}
	fmt.Fprintf(w, "Accepted records per lab second at time scale %g ÷ at time scale 1, runs 1 to %d of each cell paired by seed:\n\n", b.TimeScale, b.Pairs)
	bad := 0
	for _, m := range b.Measured {
		fmt.Fprintf(w, "  %-32s %s\n", m.Cell, biasLine(m, b.MaxBias))
		if m.State != judge.BiasWithin {
			bad++
		}
	}
	switch {
	case b.Incomplete != "":
		return &exitError{code: exitFailed, err: fmt.Errorf("calibration: incomplete: %s", b.Incomplete)}
	case bad > 0:
		return &exitError{code: exitFailed, err: fmt.Errorf("calibration: %d of %d cells not within ±%.1f%%", bad, len(b.Measured), 100*b.MaxBias)}
	}
	fmt.Fprintf(w, "\nEvery bias is within ±%.1f%%.\n", 100*b.MaxBias)
	return nil
}

func fmtStat(s judge.Stat) string {
	return fmt.Sprintf("%.2f (%.2f–%.2f)", s.Median, s.Min, s.Max)
}
