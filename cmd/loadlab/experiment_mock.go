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

func (p *progressPrinter) Calibrated(round, rounds int) {
	if p.terminal {
		fmt.Fprintf(p.w, "\rcalibrating the time scale: round %d of %d ", round, rounds)
		return
	}
	fmt.Fprintf(p.w, "calibrating the time scale: round %d of %d done\n", round, rounds)
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

// printCalibration prints the calibration's table and what it means; a bias
// beyond the limit exits 1.
func printCalibration(w io.Writer, c *judge.Calibration) error {
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

func fmtStat(s judge.Stat) string {
	return fmt.Sprintf("%.2f (%.2f–%.2f)", s.Median, s.Min, s.Max)
}
