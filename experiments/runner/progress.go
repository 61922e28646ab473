package runner

import (
	"time"

	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// Progress hears an experiment's advance, from the runner's goroutine, one
// call at a time. Embed NoProgress to hear only some of it.
type Progress interface {
	// BiasMeasured: a calibrated cell's last pair ended, and its bias is
	// m (against the limit).
	BiasMeasured(m resultsfile.CellBias, limit float64)
	// Advising: the dependency is being probed under the scenario, for
	// the strategy "advised".
	Advising(scenario, dependency string)
	// RunStarting: unit u begins, done of total runs having ended,
	// elapsed since the first began.
	RunStarting(u plan.Unit, done, total int, elapsed time.Duration)
	// RunDone: rec ended, the done'th of total.
	RunDone(rec resultsfile.RunRecord, done, total int, elapsed time.Duration)
}

// NoProgress hears nothing.
type NoProgress struct{}

func (NoProgress) BiasMeasured(resultsfile.CellBias, float64)             {}
func (NoProgress) Advising(string, string)                                {}
func (NoProgress) RunStarting(plan.Unit, int, int, time.Duration)         {}
func (NoProgress) RunDone(resultsfile.RunRecord, int, int, time.Duration) {}

// Progresses tells each of its members, in order.
type Progresses []Progress

func (ps Progresses) BiasMeasured(m resultsfile.CellBias, limit float64) {
	for _, p := range ps {
		p.BiasMeasured(m, limit)
	}
}

func (ps Progresses) Advising(scenario, dependency string) {
	for _, p := range ps {
		p.Advising(scenario, dependency)
	}
}

func (ps Progresses) RunStarting(u plan.Unit, done, total int, elapsed time.Duration) {
	for _, p := range ps {
		p.RunStarting(u, done, total, elapsed)
	}
}

func (ps Progresses) RunDone(rec resultsfile.RunRecord, done, total int, elapsed time.Duration) {
	for _, p := range ps {
		p.RunDone(rec, done, total, elapsed)
	}
}
