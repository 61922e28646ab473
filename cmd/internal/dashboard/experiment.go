package dashboard

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/experiments/runner"
	"github.com/loadlab/loadlab/mockservice/config"
)

// ExperimentProgress is a runner.Progress that shows the experiment on the
// dashboard: the matrix cell by run, the verdicts as their cells complete
// (judged over the runs so far by the runner's own rules), whether they are
// exploratory and why, each bias as it is measured, the last run's calls in
// flight, and every run's accepted rate in its cell's series.
type ExperimentProgress struct {
	runner.NoProgress
	s       *Server
	units   []plan.Unit
	res     resultsfile.Results
	mockCfg config.Config
	index   map[design.Cell]int
	started time.Time
	// ranHere counts the runs this process ran: a resumed experiment's
	// runs from its log took none of its time.
	ranHere int
}

// NewExperimentProgress shows on s the experiment of spec and hs whose
// units (the matrix, or a shard's part) are units.
func NewExperimentProgress(s *Server, spec design.Spec, hs []design.Hypothesis, lock design.Lock, units []plan.Unit, mockCfg config.Config) *ExperimentProgress {
	p := &ExperimentProgress{s: s, units: units, mockCfg: mockCfg, index: map[design.Cell]int{}, started: time.Now(),
		res: resultsfile.Results{Format: resultsfile.ResultsFormat, Experiment: spec, Hypotheses: hs, Lock: lock}}
	e := &Experiment{Runs: spec.Runs, Total: len(units)}
	if len(hs) > 0 {
		e.Exploratory = design.Exploratory(lock, spec, hs[0].Rules)
	}
	for _, u := range units {
		if _, ok := p.index[u.Cell]; !ok {
			p.index[u.Cell] = len(e.Cells)
			e.Cells = append(e.Cells, CellRow{Cell: u.Cell.String(), Runs: slices.Repeat([]string{"—"}, spec.Runs)})
		}
		e.Cells[p.index[u.Cell]].Runs[u.Run-1] = "pending"
	}
	for _, h := range hs {
		e.Verdicts = append(e.Verdicts, VerdictRow{ID: h.ID, Verdict: "pending", Claim: h.Claim})
	}
	s.Update(func(st *State) { st.Experiment = e })
	return p
}

// RunStarting marks u running.
func (p *ExperimentProgress) RunStarting(u plan.Unit, done, total int, elapsed time.Duration) {
	p.s.Update(func(st *State) {
		e := st.Experiment
		e.Cells[p.index[u.Cell]].Runs[u.Run-1] = "running"
		e.Current = fmt.Sprintf("%s run %d", u.Cell, u.Run)
		e.TimeLeft = timeLeft(p.ranHere, total-done, elapsed)
	})
}

// RunDone marks the run with its status, judges the verdicts whose cells
// are complete, and charts the run.
func (p *ExperimentProgress) RunDone(rec resultsfile.RunRecord, done, total int, elapsed time.Duration) {
	p.res.Runs = append(p.res.Runs, rec)
	p.ranHere++
	p.res.Cells = judge.Summaries(p.res.Experiment, p.res.Runs, p.mockCfg, nil)
	verdicts := judge.Rejudge(&p.res)
	p.s.Update(func(st *State) {
		e := st.Experiment
		row := &e.Cells[p.index[rec.Cell]]
		row.Runs[rec.Run-1] = string(rec.Status)
		if sum, ok := p.res.Summary(rec.Cell); ok {
			if m, ok := sum.Stats["accepted_per_second"]; ok && sum.Valid > 0 {
				row.Median = fmt.Sprintf("%.2f", m.Median)
			}
		}
		e.Done, e.Current, e.TimeLeft = done, "", timeLeft(p.ranHere, total-done, elapsed)
		if !e.Final {
			p.fillVerdicts(e, verdicts)
		}
		p.chartRun(st, rec)
	})
}

// BiasMeasured lists a calibrated cell's bias.
func (p *ExperimentProgress) BiasMeasured(m resultsfile.CellBias, limit float64) {
	p.s.Update(func(st *State) {
		st.Experiment.Calibration = append(st.Experiment.Calibration, fmt.Sprintf("%s: %s", m.Cell, runner.BiasLine(m, limit)))
	})
}

// Advising says which dependency is being probed.
func (p *ExperimentProgress) Advising(scenario, dependency string) {
	p.s.Update(func(st *State) {
		st.Experiment.Current = fmt.Sprintf("probing %s under %s for the strategy \"advised\"", dependency, scenario)
	})
}

// Final shows the results' verdicts, which the page then keeps, and
// whether they are exploratory as the results say.
func (p *ExperimentProgress) Final(res *resultsfile.Results) {
	if p == nil || res == nil {
		return
	}
	p.s.Update(func(st *State) {
		e := st.Experiment
		e.Verdicts, e.Final = nil, true
		if len(res.Verdicts) > 0 {
			e.Exploratory = ""
		}
		for _, v := range res.Verdicts {
			e.Verdicts = append(e.Verdicts, VerdictRow{ID: v.ID, Verdict: string(v.Verdict), Claim: v.Claim, Label: label(v)})
			if e.Exploratory == "" {
				e.Exploratory = v.Exploratory
			}
		}
	})
}

// fillVerdicts shows each verdict whose cells have all their runs.
func (p *ExperimentProgress) fillVerdicts(e *Experiment, verdicts []resultsfile.Verdict) {
	for i, v := range verdicts {
		if i >= len(e.Verdicts) || i >= len(p.res.Hypotheses) {
			break
		}
		h := p.res.Hypotheses[i]
		cells := h.AllCells()
		if h.Versus != nil {
			cells = append(cells, *h.Versus)
		}
		ready := true
		for _, c := range cells {
			k, ok := p.index[c]
			if !ok || slices.Contains(e.Cells[k].Runs, "pending") || slices.Contains(e.Cells[k].Runs, "running") {
				ready = false
			}
		}
		if ready {
			e.Verdicts[i] = VerdictRow{ID: v.ID, Verdict: string(v.Verdict), Claim: v.Claim, Label: label(v)}
		}
	}
}

// label is how a verdict is qualified: exploratory, and its calibration.
func label(v resultsfile.Verdict) string {
	l := string(v.Calibration)
	if v.Exploratory != "" {
		l = "exploratory " + l
	}
	return l
}

// chartRun puts the run's accepted rate in its cell's series and draws its
// calls in flight over time.
func (p *ExperimentProgress) chartRun(st *State, rec resultsfile.RunRecord) {
	p.chartAccepted(st, rec)
	if rec.Client == nil || len(rec.Client.Timeline) == 0 {
		return
	}
	tl := rec.Client.Timeline
	c := &Chart{ID: "inflight", XLabel: sinceRun,
		Title:  fmt.Sprintf("Calls in flight during %s run %d (the latest run with samples: each cell's run 1 keeps them)", rec.Cell, rec.Run),
		YLabel: "calls in flight", YUnit: "calls", Labels: []string{"lab seconds"}}
	deps := p.res.Experiment.PipelineOf().Names()
	c.Labels = append(c.Labels, deps...)
	var budgets []float64
	s := rec.Client.Params // the run's own budgets, advised ones too
	type budget struct {
		name string
		n    int
	}
	var bs []budget
	for _, d := range deps {
		bs = append(bs, budget{d + " budget", s.PermitsFor(d)})
	}
	for _, b := range append(bs, budget{"shared budget", s.SharedPermits}) {
		if b.n > 0 {
			c.Labels, c.Dashed, budgets = append(c.Labels, b.name), append(c.Dashed, b.name), append(budgets, float64(b.n))
		}
	}
	if len(budgets) > 0 {
		c.Title += ", budgets dashed"
	}
	for _, smp := range tl {
		row := []float64{smp.T}
		for _, d := range deps {
			row = append(row, float64(smp.CallsTo(d)))
		}
		c.Add(append(row, budgets...)...)
	}
	for i, old := range st.Charts {
		if old.ID == c.ID {
			st.Charts[i] = c
			return
		}
	}
	st.Charts = append(st.Charts, c)
}

// chartAccepted puts the run's accepted records per lab second in its
// cell's series, at its run number: a row per run number, a series per
// cell, and no value (a break) where a cell's run has not ended, so points
// of different cells are never joined.
func (p *ExperimentProgress) chartAccepted(st *State, rec resultsfile.RunRecord) {
	col, ok := p.index[rec.Cell]
	if !ok || rec.Run < 1 {
		return
	}
	acc := st.Chart("accepted", func() *Chart {
		c := &Chart{Title: "Accepted records per lab second of each run, one line per cell", XLabel: fmt.Sprintf("run of the cell (1 to %d)", st.Experiment.Runs),
			YLabel: "accepted records per lab second", YUnit: "accepted records per lab second", Labels: []string{"run"}, XWhole: true}
		for _, row := range st.Experiment.Cells {
			c.Labels = append(c.Labels, row.Cell)
		}
		return c
	})
	for len(acc.Rows) < max(rec.Run, st.Experiment.Runs) {
		row := make([]float64, len(acc.Labels))
		for i := range row {
			row[i] = math.NaN()
		}
		row[0] = float64(len(acc.Rows) + 1)
		acc.Rows = append(acc.Rows, row)
	}
	acc.Rows[rec.Run-1][col+1] = rec.Metrics["accepted_per_second"]
}

// timeLeft is the time the runs still to go should take at the pace of
// the ran runs run in elapsed ("" before the first, or after the last).
func timeLeft(ran, toGo int, elapsed time.Duration) string {
	if ran == 0 || toGo <= 0 || elapsed == 0 {
		return ""
	}
	left := time.Duration(float64(elapsed) / float64(ran) * float64(toGo))
	return fmt.Sprintf("about %s left", left.Round(time.Second))
}

// Logged marks the runs a resumed experiment took from its run log.
func (p *ExperimentProgress) Logged(runs map[plan.Unit]resultsfile.RunRecord) {
	if p == nil {
		return
	}
	done := 0
	for _, u := range p.units {
		if rec, ok := runs[u]; ok {
			done++
			p.RunDone(rec, done, len(p.units), 0)
		}
	}
}
