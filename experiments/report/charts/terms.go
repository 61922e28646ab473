package charts

import (
	"fmt"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/mockservice/config"
)

// terms are the words and references a chart of an experiment uses for
// its write and the calls in flight: the lab's system of record, its 503s
// and its configured workers, or one's own write dependency, its refusals
// (429 or 503) and its copy's workers as fitted.
type terms struct {
	// write names the write's dependency in a title; refusals and
	// refusalsUnit are its refusals in a title and on an axis.
	write, refusals, refusalsUnit string
	// workers is the write's workers (as configured, or as fitted),
	// workersLabel its reference line's label.
	workers      float64
	workersLabel string
	// calls are the timeline's series: each dependency's calls in flight.
	calls []callSeries
}

// callSeries is one dependency's calls in flight in a run's samples.
type callSeries struct {
	name string
	get  func(records.Sample) int
}

// termsOf is the terms of experiment sp.
func termsOf(sp design.Spec) terms {
	if sp.Own == nil {
		w := float64(config.DefaultRecordsWorkers)
		return terms{write: "the system of record", refusals: "503s", refusalsUnit: "503 answers", workers: w, workersLabel: fmt.Sprintf("%g workers", w),
			calls: []callSeries{{"enrichment", func(s records.Sample) int { return s.Enrichment }}, {"records (writes)", func(s records.Sample) int { return s.Records }}}}
	}
	write := sp.Own.Write()
	t := terms{write: write, refusals: "refusals", refusalsUnit: "refusals"}
	if v, ok := sp.Own.Copies[write]; ok {
		t.workers = float64(v.Station.Workers)
		t.workersLabel = fmt.Sprintf("%g workers (%s as probed)", t.workers, write)
	}
	for _, d := range sp.Own.Pipeline.Names() {
		name := d
		if d == write {
			name += " (writes)"
		}
		t.calls = append(t.calls, callSeries{name, func(s records.Sample) int { return s.CallsTo(d) }})
	}
	return t
}
