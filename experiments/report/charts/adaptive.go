package charts

import (
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// adaptiveDeps are the dependencies whose adaptive limits and
// amplification the report charts, in the order it draws them.
var adaptiveDeps = []string{api.Records, api.Enrichment}

// capacityColor is the colour of the system of record's capacity lines.
var capacityColor = color.Black

// Adaptive draws the adaptive section's charts: per scenario and CPU
// setting with an adaptive strategy, its limits over run 1; per CPU
// setting, when any cell retried, the offered load amplification per
// strategy and scenario.
func Adaptive(r *resultsfile.Results) ([]Figure, error) {
	sp := r.Experiment
	cfg := config.Default() // the report has no other: the runner's MockConfig is not in the results
	var out []Figure
	for _, sc := range sp.Scenarios {
		for _, cpu := range sp.CPUs {
			var runs []resultsfile.RunRecord
			for _, st := range sp.Strategies {
				if rec, ok := adaptiveRun(r, design.Cell{Strategy: st, Scenario: sc, CPU: cpu.Name}); ok {
					runs = append(runs, rec)
				}
			}
			if len(runs) == 0 {
				continue
			}
			svg, caption, err := adaptiveLimitChart(r, cfg, sc, cpu.Name, runs)
			if err != nil {
				return nil, fmt.Errorf("adaptive limits, %s: %w", sc, err)
			}
			if svg != "" {
				out = append(out, Figure{Caption: caption, SVG: svg})
			}
		}
	}
	if !slices.ContainsFunc(r.Cells, Retried) {
		return out, nil // amplification is 1 throughout
	}
	for _, cpu := range sp.CPUs {
		svg, caption, err := amplificationChart(r, cpu.Name)
		if err != nil {
			return nil, fmt.Errorf("amplification, %s: %w", cpu.Name, err)
		}
		if svg != "" {
			out = append(out, Figure{Caption: caption, SVG: svg})
		}
	}
	return out, nil
}

// Retried says whether a cell's runs retried: retries or denied retries,
// or offered load other than its first attempts. Only when some cell did
// is the amplification charted; the adaptive section's table shows such a
// cell.
func Retried(cs resultsfile.CellSummary) bool {
	for m, neutral := range map[string]float64{"records_retries": 0, "records_retries_denied": 0, "records_amplification": 1, "enrichment_amplification": 1} {
		if s, ok := cs.Stats[m]; ok && s.N > 0 && (s.Max > neutral+1e-9 || s.Min < neutral-1e-9) {
			return true
		}
	}
	return false
}

// adaptiveRun is run 1 of a cell whose strategy has adaptive limits (only
// run 1 keeps its timeline), when its timeline sampled a limit: a strategy
// without adaptive limits samples none.
func adaptiveRun(r *resultsfile.Results, c design.Cell) (resultsfile.RunRecord, bool) {
	for _, rec := range r.Runs {
		if rec.Cell != c || rec.Run != 1 || rec.Client == nil {
			continue
		}
		for _, s := range rec.Client.Timeline {
			if len(s.Limits) > 0 {
				return rec, true
			}
		}
		return resultsfile.RunRecord{}, false
	}
	return resultsfile.RunRecord{}, false
}

// limitLine is one line of a limits panel; a strategy's has the colour of
// its index in the experiment's strategies, as in the bar charts.
type limitLine struct {
	name   string
	series int
	xy     plotter.XYs
}

// adaptiveLimitChart draws a scenario's adaptive limits on one CPU
// setting: a panel per dependency with a sampled limit, one line per
// strategy, the records panel against the system of record's capacity,
// and a phased scenario's phases marked.
func adaptiveLimitChart(r *resultsfile.Results, cfg config.Config, sc, cpu string, runs []resultsfile.RunRecord) (string, string, error) {
	sp := r.Experiment
	ps, phased := sp.Phased(sc)
	end := 0.0
	if phased {
		end = ps.Total().Seconds()
	}
	for _, rec := range runs {
		if tl := rec.Client.Timeline; len(tl) > 0 {
			end = max(end, tl[len(tl)-1].T)
		}
	}
	if end <= 0 {
		end = 1 // a lone sample at the start
	}
	title := sc
	if len(sp.CPUs) > 1 {
		title += ", " + cpu
	}
	var plots []*plot.Plot
	var panels []string
	capacity := ""
	for _, dep := range adaptiveDeps {
		var lines []limitLine
		for _, rec := range runs {
			var xy plotter.XYs
			for _, s := range rec.Client.Timeline {
				if l, ok := s.Limits[dep]; ok {
					xy = append(xy, plotter.XY{X: s.T, Y: float64(l)})
				}
			}
			if len(xy) > 0 {
				name := rec.Cell.Strategy
				if !rec.Valid() {
					name += " (run 1 " + string(rec.Status) + ")"
				}
				lines = append(lines, limitLine{name: name, series: slices.Index(sp.Strategies, rec.Cell.Strategy), xy: xy})
			}
		}
		if len(lines) == 0 {
			continue
		}
		var refs []limitLine
		if dep == api.Records {
			refs = recordsCapacity(cfg, sp, sc, end)
			if len(refs) > 0 {
				capacity = " Black, dashed: the system of record's workers; dotted: its workers plus queue slots (beyond them it answers 503), " +
					"from the mock service's default configuration"
				if phased {
					capacity += " and the phases' settings"
				}
				capacity += "."
			}
		}
		var pp *phases.PhasedScenario
		if phased {
			pp = &ps
		}
		p, err := limitPanel(fmt.Sprintf("Adaptive limit of %s calls over run 1, %s", dep, title), pp, lines, refs, end)
		if err != nil {
			return "", "", err
		}
		plots, panels = append(plots, p), append(panels, dep)
	}
	if len(plots) == 0 {
		return "", "", nil
	}
	svg, err := svgStacked(plots, chartWidth, vg.Length(len(plots))*timelineHeight)
	where := "(" + panels[0] + ")"
	if len(panels) > 1 {
		where = "(" + panels[0] + ", top; " + panels[1] + ", bottom)"
	}
	caption := fmt.Sprintf("%s: each adaptive strategy's concurrency limit %s over run 1, sampled by the client.%s", title, where, capacity)
	if phased {
		caption += " Shaded and dashed: the phases."
	}
	return svg, caption, err
}

// recordsCapacity is the system of record's workers and workers + queue
// slots over [0, end] lab seconds of a run of scenario sc: constant for a
// steady scenario; for a phased one, each phase's settings applied in turn
// from its profile's, as the runner applies them (config.ApplyPatch). None
// when a phase's settings do not apply; no queue line for an unbounded
// queue.
func recordsCapacity(cfg config.Config, sp design.Spec, sc string, end float64) []limitLine {
	var workers, slots plotter.XYs
	unbounded := false
	add := func(from, to float64, st config.Station) {
		workers = append(workers, plotter.XY{X: from, Y: float64(st.Workers)}, plotter.XY{X: to, Y: float64(st.Workers)})
		slots = append(slots, plotter.XY{X: from, Y: float64(st.Workers + st.Queue)}, plotter.XY{X: to, Y: float64(st.Workers + st.Queue)})
		unbounded = unbounded || st.Queue == config.UnboundedQueue
	}
	ps, phased := sp.Phased(sc)
	live := cfg.LiveOf(sp.ProfileOf(sc))
	if !phased {
		add(0, end, live[api.Records].Station)
	}
	for i, ph := range ps.Phases {
		if len(ph.Set) > 0 {
			body, err := ph.PatchBody()
			if err == nil {
				live, _, err = config.ApplyPatch(body, live)
			}
			if err != nil {
				return nil
			}
		}
		to := ps.Start(i + 1).Seconds()
		if i == len(ps.Phases)-1 {
			to = max(to, end) // the drain: the last phase's settings stay
		}
		add(ps.Start(i).Seconds(), to, live[api.Records].Station)
	}
	out := []limitLine{{name: "workers (system of record)", xy: workers}}
	if !unbounded {
		out = append(out, limitLine{name: "workers + queue slots", xy: slots})
	}
	return out
}

// limitPanel is one dependency's panel: a line per strategy, reference
// lines (dashed, then dotted) and, for a phased scenario, the phases
// shaded in turn, dashed lines at their boundaries and their names above
// the data, as the phased charts mark them.
func limitPanel(title string, ps *phases.PhasedScenario, lines, refs []limitLine, end float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "lab seconds"
	p.Y.Label.Text = "limit (calls in flight)"
	p.X.Min, p.X.Max, p.Y.Min = 0, end, 0
	top := 0.0
	var drawn []plot.Plotter
	for i, ln := range slices.Concat(lines, refs) {
		for _, pt := range ln.xy {
			top = max(top, pt.Y)
		}
		l, err := plotter.NewLine(ln.xy)
		if err != nil {
			return nil, err
		}
		if i < len(lines) {
			l.Color = palette[max(ln.series, 0)%len(palette)]
			l.LineStyle.Width = vg.Points(1.5)
		} else {
			l.Color, l.LineStyle.Width = capacityColor, vg.Points(1)
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			if i > len(lines) {
				l.Dashes = []vg.Length{vg.Points(1.5), vg.Points(2)}
			}
		}
		drawn = append(drawn, l)
		p.Legend.Add(ln.name, l)
	}
	if top <= 0 {
		top = 1
	}
	if ps == nil {
		roomForLegend(p, top, chartWidth, timelineHeight)
		p.Add(drawn...)
		return p, nil
	}
	// The data stays below the phases' names, which stay below the legend.
	roomForLegend(p, top*1.15, chartWidth, timelineHeight)
	ymax := p.Y.Max
	names, err := markPhases(p, *ps, end, top)
	if err != nil {
		return nil, err
	}
	p.Add(names)
	p.Add(drawn...)
	p.Y.Max = ymax
	return p, nil
}

// amplificationChart draws, on one CPU setting, each cell's median offered
// load amplification per dependency (requests the server saw per first
// attempt), grouped by scenario, whiskers min–max; nothing when no cell
// has the metric (results from before retries).
func amplificationChart(r *resultsfile.Results, cpu string) (string, string, error) {
	var plots []*plot.Plot
	var panels []string
	for _, dep := range adaptiveDeps {
		p, err := grouped(r, cpu, dep+"_amplification", fmt.Sprintf("Offered load amplification at %s, %s (median, min–max)", dep, cpu),
			"requests the server saw per first attempt (×)", 1, "1×: no retries")
		if err != nil {
			return "", "", err
		}
		if p != nil {
			plots, panels = append(plots, p), append(panels, dep)
		}
	}
	if len(plots) == 0 {
		return "", "", nil
	}
	svg, err := svgStacked(plots, chartWidth, vg.Length(len(plots))*chartHeight)
	where := "the mock service's " + panels[0] + " station"
	if len(panels) > 1 {
		where = "the mock service's " + panels[0] + " (top) and " + panels[1] + " (bottom) stations"
	}
	caption := fmt.Sprintf("Offered load amplification per strategy and scenario, %s: the requests %s saw per first attempt "+
		"of the client (retries make it more than 1×), median over the cell's valid runs, whiskers min–max; cells without "+
		"the figure are left out.", cpu, where)
	return svg, caption, err
}
