package dashboard

import (
	"fmt"
	"slices"
	"time"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/runner"
	"github.com/loadlab/loadlab/mockservice/config"
)

// ExperimentProgress is a runner.Progress that shows the experiment on the
// dashboard: the matrix cell by run, the verdicts as their cells complete
// (judged over the runs so far by the runner's own rules), each bias as it
// is measured, the last run's calls in flight, and every run's accepted
// rate.
type ExperimentProgress struct {
	runner.NoProgress
	s       *Server
	units   []plan.Unit
	res     judge.Results
	mockCfg config.Config
	index   map[design.Cell]int
	started time.Time
}

// NewExperimentProgress shows on s the experiment of spec and hs whose
// units (the matrix, or a shard's part) are units.
func NewExperimentProgress(s *Server, spec design.Spec, hs []design.Hypothesis, lock design.Lock, units []plan.Unit, mockCfg config.Config) *ExperimentProgress {
	p := &ExperimentProgress{s: s, units: units, mockCfg: mockCfg, index: map[design.Cell]int{}, started: time.Now(),
		res: judge.Results{Format: judge.ResultsFormat, Experiment: spec, Hypotheses: hs, Lock: lock}}
	e := &Experiment{Runs: spec.Runs, Total: len(units)}
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
		e.TimeLeft = timeLeft(done, total, elapsed)
	})
}

// RunDone marks the run with its status, judges the verdicts whose cells
// are complete, and charts the run.
func (p *ExperimentProgress) RunDone(rec judge.RunRecord, done, total int, elapsed time.Duration) {
	p.res.Runs = append(p.res.Runs, rec)
	p.res.Cells = judge.Summaries(p.res.Experiment, p.res.Runs, p.mockCfg, nil)
	verdicts := judge.Rejudge(&p.res)
	p.s.Update(func(st *State) {
		e := st.Experiment
		row := &e.Cells[p.index[rec.Cell]]
		row.Runs[rec.Run-1] = string(rec.Status)
		if sum, ok := p.res.Summary(rec.Cell); ok {
			if m, ok := sum.Stats["accepted_per_second"]; ok && sum.Valid > 0 {
				row.Median = fmt.Sprintf("%.2f /lab s", m.Median)
			}
		}
		e.Done, e.Current, e.TimeLeft = done, "", timeLeft(done, total, elapsed)
		if !e.Final {
			p.fillVerdicts(e, verdicts)
		}
		chartRun(st, rec, done)
	})
}

// BiasMeasured lists a calibrated cell's bias.
func (p *ExperimentProgress) BiasMeasured(m judge.CellBias, limit float64) {
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

// Final shows the results' verdicts, which the page then keeps.
func (p *ExperimentProgress) Final(res *judge.Results) {
	if p == nil || res == nil {
		return
	}
	p.s.Update(func(st *State) {
		e := st.Experiment
		e.Verdicts, e.Final = nil, true
		for _, v := range res.Verdicts {
			e.Verdicts = append(e.Verdicts, VerdictRow{ID: v.ID, Verdict: string(v.Verdict), Claim: v.Claim, Label: label(v)})
		}
	})
}

// fillVerdicts shows each verdict whose cells have all their runs.
func (p *ExperimentProgress) fillVerdicts(e *Experiment, verdicts []judge.Verdict) {
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
func label(v judge.Verdict) string {
	l := string(v.Calibration)
	if v.Exploratory != "" {
		l = "exploratory " + l
	}
	return l
}

// chartRun adds the run to the accepted-rate chart and draws its calls
// in flight over time.
func chartRun(st *State, rec judge.RunRecord, done int) {
	acc := st.Chart("accepted", func() *Chart {
		return &Chart{Title: "Accepted records per lab second, each run as it ends", XLabel: "run (in order)", YLabel: "records / lab s",
			Labels: []string{"run", "accepted"}}
	})
	acc.Add(float64(done), rec.Metrics["accepted_per_second"])
	if rec.Client == nil || len(rec.Client.Timeline) == 0 {
		return
	}
	tl := rec.Client.Timeline
	c := &Chart{ID: "inflight", Title: "Calls in flight during the last run: " + rec.Cell.String(), XLabel: "lab s", YLabel: "calls",
		Labels: []string{"lab s", "enrichment", "records"}}
	var budgets []float64
	if s, err := records.ParseStrategy(rec.Cell.Strategy); err == nil {
		for _, b := range []struct {
			name string
			n    int
		}{{"enrichment budget", s.EnrichPermits}, {"records budget", s.WritePermits}, {"shared budget", s.SharedPermits}} {
			if b.n > 0 {
				c.Labels, c.Dashed, budgets = append(c.Labels, b.name), append(c.Dashed, b.name), append(budgets, float64(b.n))
			}
		}
	}
	if len(budgets) > 0 {
		c.Title += ", budgets dashed"
	}
	for _, smp := range tl {
		c.Add(append([]float64{smp.T, float64(smp.Enrichment), float64(smp.Records)}, budgets...)...)
	}
	for i, old := range st.Charts {
		if old.ID == c.ID {
			st.Charts[i] = c
			return
		}
	}
	st.Charts = append(st.Charts, c)
}

// timeLeft is the time the remaining runs should take at the pace so far.
func timeLeft(done, total int, elapsed time.Duration) string {
	if done == 0 || done == total || elapsed == 0 {
		return ""
	}
	left := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
	return fmt.Sprintf("about %s left", left.Round(time.Second))
}

// Logged marks the runs a resumed experiment took from its run log.
func (p *ExperimentProgress) Logged(runs map[plan.Unit]judge.RunRecord) {
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
