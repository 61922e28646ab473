package runner

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// NewPrinter is the experiment's progress for people: on a terminal a bar
// (runs done of all, the current cell, time left), otherwise one plain
// line per finished run; each calibrated cell's bias the moment it is
// measured, with what it will do.
func NewPrinter(w io.Writer, terminal bool) Progress {
	return &progressPrinter{w: w, terminal: terminal}
}

// progressPrinter is the experiment's progress on stderr.
type progressPrinter struct {
	w        io.Writer
	terminal bool
	bar      *progressbar.ProgressBar
	// ranHere counts the runs this attempt ran: a resumed experiment's
	// runs from its journal took none of its time.
	ranHere int
}

// BiasMeasured says a calibrated cell's bias the moment it is measured,
// and, beyond the limit or unresolved, what it will do and how to stop or
// accept it.
func (p *progressPrinter) BiasMeasured(m resultsfile.CellBias, limit float64) {
	if p.terminal {
		fmt.Fprintln(p.w)
	}
	fmt.Fprintf(p.w, "time-scale bias of %s: %s\n", m.Cell, BiasLine(m, limit))
	switch m.State {
	case resultsfile.BiasBeyond:
		fmt.Fprintf(p.w, "  the verdicts on its rates and durations that a bias in this interval could change will be inconclusive:\n"+
			"  stop with Ctrl-C, run again with --accept-bias, or accept it after the run with loadlab check --accept-bias DIR\n")
	case resultsfile.BiasUnresolved:
		fmt.Fprintf(p.w, "  the verdicts on its rates and durations that a bias in this interval could change will be provisional (exit 1):\n"+
			"  --accept-uncalibrated makes them final\n")
	case resultsfile.BiasUnmeasured:
		fmt.Fprintf(p.w, "  the verdicts on its rates and durations will be provisional (exit 1): --accept-uncalibrated makes them final\n")
	}
}

// BiasLine is a cell's bias, its interval and its state against the limit.
func BiasLine(m resultsfile.CellBias, limit float64) string {
	state := map[resultsfile.BiasState]string{resultsfile.BiasWithin: "within", resultsfile.BiasBeyond: "BEYOND", resultsfile.BiasUnresolved: "UNRESOLVED against",
		resultsfile.BiasUnmeasured: "NOT MEASURED against"}[m.State]
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

func (p *progressPrinter) RunStarting(u plan.Unit, done, total int, elapsed time.Duration) {
	if p.terminal {
		p.barAt(u, done, total, p.left(done, total, elapsed))
	}
}

func (p *progressPrinter) RunDone(rec resultsfile.RunRecord, done, total int, elapsed time.Duration) {
	p.ranHere++
	left := p.left(done, total, elapsed)
	if p.terminal {
		p.barAt(plan.Unit{Cell: rec.Cell, Run: rec.Run}, done, total, left)
		return
	}
	status := string(rec.Status)
	if !rec.Valid() {
		status = strings.ToUpper(status) + ": " + rec.Reason
	} else if m := rec.Metrics; m != nil {
		refused := "write 503s"
		if rec.WriteStation != "" { // one's own write may refuse with 429 or 503
			refused = "writes refused"
		}
		status = fmt.Sprintf("%.2f accepted/s, %.0f %s", m["accepted_per_second"], m["write_rejections"], refused)
	}
	fmt.Fprintf(p.w, "%d/%d %s run %d: %s (~%s left)\n", done, total, rec.Cell, rec.Run, status, left)
}

// left is the time the total−done runs still to go will take at the pace
// of the runs this attempt ran in elapsed ("?" before the first).
func (p *progressPrinter) left(done, total int, elapsed time.Duration) string {
	if p.ranHere == 0 {
		return "?"
	}
	return (elapsed / time.Duration(p.ranHere) * time.Duration(total-done)).Round(time.Second).String()
}

// barAt moves the bar to done of total, naming the unit and the time left
// (the bar's own prediction would count a resumed experiment's runs from
// its journal as run in no time).
func (p *progressPrinter) barAt(u plan.Unit, done, total int, left string) {
	if p.bar == nil {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w), progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(), progressbar.OptionSetItsString("runs"),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }))
	}
	p.bar.Describe(fmt.Sprintf("%s run %d (~%s left)", u.Cell, u.Run, left))
	_ = p.bar.Set(done)
}

// WriteCalibration writes each calibrated cell's bias and what it means
// (loadlab experiment --calibration-only), and says what is wrong with
// the calibration, if anything: a bias not within the limit, or a
// calibration that did not complete.
func WriteCalibration(w io.Writer, b *resultsfile.Bias) (problem string) {
	if b.Skipped != "" {
		fmt.Fprintf(w, "Time-scale bias not measured: %s\n", b.Skipped)
		return ""
	}
	fmt.Fprintf(w, "Accepted records per lab second at time scale %g ÷ at time scale 1, runs 1 to %d of each cell paired by seed:\n\n", b.TimeScale, b.Pairs)
	bad := 0
	for _, m := range b.Measured {
		fmt.Fprintf(w, "  %-32s %s\n", m.Cell, BiasLine(m, b.MaxBias))
		if m.State != resultsfile.BiasWithin {
			bad++
		}
	}
	switch {
	case b.Incomplete != "":
		return "incomplete: " + b.Incomplete
	case bad > 0:
		return fmt.Sprintf("%d of %d cells not within ±%.1f%%", bad, len(b.Measured), 100*b.MaxBias)
	}
	fmt.Fprintf(w, "\nEvery bias is within ±%.1f%%.\n", 100*b.MaxBias)
	return ""
}
