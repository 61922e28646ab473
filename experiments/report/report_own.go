package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/own"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
)

// ownCellsIntro is the cells table's introduction for an experiment on
// one's own services, which has no bound: the lab's profiles model none
// of them.
const ownCellsIntro = "One's own services, each run against virtual copies fitted from their probes and started for it alone: no Little's-law bound from the lab's profiles. Peak calls are the most a dependency had in flight at the client; refused, the calls its copy refused (its station's and its token bucket's); write refusals, the writes refused."

// ownSection is, for an experiment on one's own services, what ran
// against what: the pipeline, each copy as fitted from its probe, and
// what each scenario changed in the copies (nil for the lab's).
func ownSection(sp design.Spec) (intro string, copies table, scenarios []string) {
	o := sp.Own
	if o == nil {
		return "", table{}, nil
	}
	intro = fmt.Sprintf("Pipeline %s (%s; the write: %s), every dependency against a virtual copy fitted from its probe:", o.Pipeline.Name,
		strings.Join(o.Pipeline.Names(), ", "), o.Write())
	if real := o.Real(); len(real) > 0 {
		intro = fmt.Sprintf("Pipeline %s (%s; the write: %s); %s at its base_url, a real service whose calls are not reconciled, the others against virtual copies fitted from their probes:",
			o.Pipeline.Name, strings.Join(o.Pipeline.Names(), ", "), o.Write(), strings.Join(real, ", "))
	}
	copies.Head = []string{"dependency", "probe", "method", "workers", "queue slots", "refusal", "rate (per lab s)", "median service ms", "longest service ms"}
	for _, name := range slices.Sorted(maps.Keys(o.Copies)) {
		v := o.Copies[name]
		queue := fmt.Sprint(v.Station.Queue)
		if v.Station.Queue == config.UnboundedQueue {
			queue = "unbounded"
		}
		rate := "none"
		if v.Rate != nil {
			rate = fmt.Sprintf("%.4g (burst %d, %d beyond)", v.Rate.PerSecond, v.Rate.Burst, v.Rate.Status)
		}
		copies.Rows = append(copies.Rows, []string{name, sp.Virtual[name].Probe, v.Method, fmt.Sprint(v.Station.Workers), queue,
			fmt.Sprint(v.Station.RejectStatus), rate, ms(medianOf(v)), ms(v.Service.Longest().Seconds())})
	}
	for _, sc := range sp.Scenarios {
		ch := sp.Changes[sc]
		if _, phased := sp.PhasedScenarios[sc]; phased {
			scenarios = append(scenarios, sc+": phased, the copies changed during each run (see below)")
			continue
		}
		if len(ch) == 0 {
			scenarios = append(scenarios, sc+": the copies as probed")
			continue
		}
		var each []string
		for _, dep := range slices.Sorted(maps.Keys(ch)) {
			each = append(each, dep+" "+changeText(ch[dep], o.Copies[dep], sp.CopiesFor(sc)[dep]))
		}
		scenarios = append(scenarios, sc+": "+strings.Join(each, "; "))
	}
	return intro, copies, scenarios
}

// changeText says what a change made of a copy: "service times ×3",
// "workers 3 → 2".
func changeText(ch own.CopyChange, was, is config.Virtual) string {
	var parts []string
	if ch.ServiceTime != nil {
		parts = append(parts, fmt.Sprintf("service times ×%g", *ch.ServiceTime))
	}
	if ch.Workers != nil {
		parts = append(parts, fmt.Sprintf("workers %d → %d (×%g)", was.Station.Workers, is.Station.Workers, *ch.Workers))
	}
	if ch.Queue != nil {
		parts = append(parts, fmt.Sprintf("queue slots %d → %d (×%g)", was.Station.Queue, is.Station.Queue, *ch.Queue))
	}
	if ch.Rate != nil && was.Rate != nil {
		parts = append(parts, fmt.Sprintf("rate %.4g → %.4g per lab s (×%g)", was.Rate.PerSecond, is.Rate.PerSecond, *ch.Rate))
	}
	return strings.Join(parts, ", ")
}

// medianOf is a copy's median service time in seconds: its empirical
// distribution's point at q 0.5 (interpolated), else its median or value.
func medianOf(v config.Virtual) float64 {
	qs := v.Service.Quantiles
	for i := 1; i < len(qs); i++ {
		if qs[i].Q >= 0.5 {
			lo, hi := qs[i-1], qs[i]
			f := (0.5 - lo.Q) / (hi.Q - lo.Q)
			return lo.Value.Seconds() + f*(hi.Value-lo.Value).Seconds()
		}
	}
	if v.Service.Median > 0 {
		return v.Service.Median.Seconds()
	}
	return v.Service.Value.Seconds()
}

func ms(s float64) string { return fmt.Sprintf("%.3g", s*1000) }

// ownCellsTable is every cell's figures for an experiment on one's own
// services: by dependency its peak calls in flight and its copy's
// refusals, and the columns the lab's table has but the bound.
func ownCellsTable(r *resultsfile.Results) (t table, split []int) {
	sp := r.Experiment
	deps := sp.Own.Pipeline.Names()
	t.Head = []string{"cell", "accepted/s", "duration s", "write refusals", "peak concurrent writes", "incomplete"}
	for _, d := range deps {
		t.Head = append(t.Head, "peak calls "+d, "refused "+d)
	}
	t.Head = append(t.Head, "permit timeouts", "call timeouts", "GOMAXPROCS", "CPU limit", "valid runs", "excluded runs")
	for _, cs := range r.Cells {
		g := func(m string, d int) string { s, ok := cs.Stats[m]; return fmtStat(s, ok, d) }
		row := []string{cs.Cell.String(), g("accepted_per_second", 2), g("duration_seconds", 1), g("write_rejections", 0),
			g("peak_concurrent_writes", 0), g("incomplete", 0)}
		for _, d := range deps {
			row = append(row, g("peak_in_flight_"+d, 0), g(d+"_refused", 0))
		}
		row = append(row, g("permit_timeouts", 0), g("call_timeouts", 0), g("gomaxprocs", 0), cs.Mechanism,
			fmt.Sprintf("%d of %d", cs.Valid, sp.Runs), excludedReasons(cs.Excluded))
		t.Rows = append(t.Rows, row)
	}
	// What each cell achieved, then what limited it and how many counted.
	return t, []int{6 + 2*len(deps)}
}

// ownPhasedIntro says what a phased scenario of one's own copies does.
const ownPhasedIntro = "A phased scenario changes the virtual copies during each run: every run lasts the scenario's phases in lab time, " +
	"each run's copies start as probed, and at each phase's start the runner gives the copies the phase names the copy as fitted with " +
	"the phase's changes (the others keep what is in force) and replaces the network faults between the client and each copy (durations " +
	"in lab time). Per strategy and phase, median (minimum–maximum) over the cell's valid runs; an event (a record's end, a write's " +
	"answer) counts in the phase holding the lab time it happened at; \"drain\" holds the records still in progress when the last phase " +
	"ended. Peak writes in flight are counted at the client (calls to the write's dependency at once, refused ones included), and record " +
	"latency is from a record's beginning to its end in lab milliseconds: both the median over runs of each run's figure."

// ownPhaseLines says what each phase of a phased scenario of copies
// changes, in the copies' terms ("orders workers 3 → 1 (×0.34)").
func ownPhaseLines(sp design.Spec, sc string, lines []phaseLine) []phaseLine {
	shapes := sp.PhaseCopies(sc)
	ps := sp.PhasedScenarios[sc]
	for i, ph := range ps.Phases {
		if len(ph.Set) == 0 {
			continue
		}
		var each []string
		ch, _ := own.PhaseChanges(ph) // validated at load
		for _, dep := range slices.Sorted(maps.Keys(ch)) {
			text := changeText(ch[dep], sp.Own.Copies[dep], shapes[i][dep])
			if text == "" {
				text = "as fitted"
			}
			each = append(each, dep+" "+text)
		}
		lines[i].Set = strings.Join(each, "; ")
	}
	return lines
}
