package charts

import (
	"fmt"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/mockservice/config"
)

// adaptiveSpec is an experiment of three strategies (C4; C5-vegas, with
// adaptive limits; C6, with retries) on the built-in write-capacity-drop
// and on healthy, three runs per cell.
func adaptiveSpec() design.Spec {
	return design.Spec{Name: "adaptive-report", Records: 100000, Runs: 3, TimeScale: 0.2, CallTimeout: 2 * time.Second,
		PermitTimeout: 10 * time.Second, Seed: 1, Strategies: []string{"C4", "C5-vegas", "C6"},
		Scenarios: []string{phases.WriteCapacityDrop, config.ProfileHealthy}, CPUs: []design.CPUSetting{{Name: "cpus-1", CPUs: 1}}, Duration: 40 * time.Second}
}

// The system of record's capacity follows write-capacity-drop's phases
// (the drop's 2 workers and 2 queue slots, then the default again, which
// lasts through the drain) and is the default throughout a steady scenario.
func TestAdaptiveRecordsCapacity(t *testing.T) {
	def := config.Default()
	sp := adaptiveSpec()
	w, q := float64(def.Records.Workers), float64(def.Records.Workers+def.Records.Queue)
	refs := recordsCapacity(def, sp, phases.WriteCapacityDrop, 41)
	if len(refs) != 2 {
		t.Fatalf("%d capacity lines, want workers and workers + queue slots", len(refs))
	}
	want := []plotter.XYs{
		{{X: 0, Y: w}, {X: 10, Y: w}, {X: 10, Y: phases.DropWorkers}, {X: 30, Y: phases.DropWorkers}, {X: 30, Y: w}, {X: 41, Y: w}},
		{{X: 0, Y: q}, {X: 10, Y: q}, {X: 10, Y: phases.DropWorkers + phases.DropQueue}, {X: 30, Y: phases.DropWorkers + phases.DropQueue}, {X: 30, Y: q}, {X: 41, Y: q}},
	}
	for i, r := range refs {
		if fmt.Sprint(r.xy) != fmt.Sprint(want[i]) {
			t.Errorf("%s: %v, want %v", r.name, r.xy, want[i])
		}
	}
	refs = recordsCapacity(def, sp, config.ProfileHealthy, 40)
	if len(refs) != 2 || fmt.Sprint(refs[0].xy) != fmt.Sprint(plotter.XYs{{X: 0, Y: w}, {X: 40, Y: w}}) ||
		fmt.Sprint(refs[1].xy) != fmt.Sprint(plotter.XYs{{X: 0, Y: q}, {X: 40, Y: q}}) {
		t.Errorf("healthy: %v, want %g workers and %g slots throughout", refs, w, q)
	}
	// An unbounded queue has no workers + queue line.
	def.Records.Queue = config.UnboundedQueue
	if refs := recordsCapacity(def, sp, config.ProfileHealthy, 40); len(refs) != 1 {
		t.Errorf("%d capacity lines with an unbounded queue, want the workers' alone", len(refs))
	}
}

// The limits panel keeps its legend clear of the data, the capacity lines
// and the phases' names included.
func TestAdaptiveChartKeepsTheLegendClear(t *testing.T) {
	sp := adaptiveSpec()
	ps, _ := sp.Phased(phases.WriteCapacityDrop)
	var xy plotter.XYs
	for i := range 400 {
		xy = append(xy, plotter.XY{X: float64(i) / 10, Y: float64(3 + i%6)})
	}
	refs := recordsCapacity(config.Default(), sp, phases.WriteCapacityDrop, 40)
	p, err := limitPanel("limits", &ps, []limitLine{{name: "C5-vegas", xy: xy}, {name: "C5-aimd", series: 1, xy: xy}}, refs, 40)
	if err != nil {
		t.Fatal(err)
	}
	top := float64(config.Default().Records.Workers + config.Default().Records.Queue)
	legendClear(t, p, top*1.15, chartWidth, timelineHeight)
}
