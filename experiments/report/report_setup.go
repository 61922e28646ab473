package report

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// setup says what every run was: its records or lab time, the runs per
// cell, the time scale, the timeouts and the seeds.
func setup(r *resultsfile.Results) string {
	sp := r.Experiment
	s := fmt.Sprintf("%s, %d runs per cell, time scale %g (times and rates below are in lab seconds), call timeout %v, permit timeout %v.",
		perRun(sp), sp.Runs, sp.TimeScale, sp.CallTimeout, sp.PermitTimeout)
	if cells := sp.RealTimeCells(); len(cells) > 0 {
		names := make([]string, len(cells))
		for i, c := range cells {
			names[i] = c.String()
		}
		s += fmt.Sprintf(" In real time (time scale 1, on a mock service of their own: no time-scale bias): %s.", strings.Join(names, ", "))
	}
	if len(r.Runs) > 0 && r.Runs[0].Seed != 0 && sp.Own != nil {
		s += fmt.Sprintf(" Run k of every cell drew its service times from virtual copies seeded %d + k (%d to %d; each copy from a stream of its own derived from the same seed).",
			sp.Seed, plan.RunSeed(sp, 1), plan.RunSeed(sp, sp.Runs))
	} else if len(r.Runs) > 0 && r.Runs[0].Seed != 0 {
		s += fmt.Sprintf(" Run k of every cell drew its service times from mock-service seed %d + k (%d to %d; the system of record from a stream of its own derived from the same seed).",
			sp.Seed, plan.RunSeed(sp, 1), plan.RunSeed(sp, sp.Runs))
	}
	return s
}

// perRun says what bounds a run: its records, or its lab time.
func perRun(sp design.Spec) string {
	if sp.Duration > 0 {
		return fmt.Sprintf("Time-bounded runs of %v lab time (records keep coming; at most %d records per run)", sp.Duration, sp.Records)
	}
	return fmt.Sprintf("%d records per run", sp.Records)
}
