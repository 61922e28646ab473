package charts

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// phasedChartHeight is the height of a phased scenario's chart: two
// panels, one above the other.
const phasedChartHeight = 2 * timelineHeight

// Colours of the phases' marks.
var (
	phaseShade = color.RGBA{0xee, 0xee, 0xee, 0xff}
	phaseMark  = color.RGBA{0x55, 0x55, 0x55, 0xff}
)

// Phased draws a phased scenario's chart on one CPU setting: accepted
// records and write 503s per lab second over the run, one line per
// strategy; none when the scenario is not phased or no valid run kept its
// seconds.
func Phased(r *resultsfile.Results, sc, cpu string) ([]Figure, error) {
	ps, ok := r.Experiment.Phased(sc)
	if !ok {
		return nil, nil
	}
	svg, caption, err := phasedChart(r, ps, sc, cpu)
	if err != nil || svg == "" {
		return nil, err
	}
	return []Figure{{Caption: caption, SVG: svg}}, nil
}

// perSecondSeries is one strategy's median per lab second over its valid
// runs: a run that had ended counts 0 in the seconds after its end.
type perSecondSeries struct {
	strategy           string
	accepted, rejected plotter.XYs
	runs               int
}

func medianPerSecond(r *resultsfile.Results, c design.Cell) (perSecondSeries, bool) {
	var runs [][]records.SecondCounts
	n := 0
	for _, run := range r.Runs {
		if run.Cell == c && run.Valid() && run.Client != nil && len(run.Client.PerSecond) > 0 {
			runs = append(runs, run.Client.PerSecond)
			n = max(n, len(run.Client.PerSecond))
		}
	}
	if len(runs) == 0 {
		return perSecondSeries{}, false
	}
	s := perSecondSeries{strategy: c.Strategy, runs: len(runs)}
	for t := range n {
		var acc, rej []float64
		for _, ps := range runs {
			var sc records.SecondCounts
			if t < len(ps) {
				sc = ps[t]
			}
			acc, rej = append(acc, float64(sc.Accepted)), append(rej, float64(sc.WriteRejections))
		}
		x := float64(t) + 0.5 // the second [t, t+1)
		s.accepted = append(s.accepted, plotter.XY{X: x, Y: judge.Summarize(acc).Median})
		s.rejected = append(s.rejected, plotter.XY{X: x, Y: judge.Summarize(rej).Median})
	}
	return s, true
}

// phasedChart draws a phased scenario's two panels on one CPU setting, or
// nothing when no valid run kept its seconds.
func phasedChart(r *resultsfile.Results, ps phases.PhasedScenario, sc, cpu string) (string, string, error) {
	var series []perSecondSeries
	var names []string
	end := ps.Total().Seconds()
	for _, st := range r.Experiment.Strategies {
		if s, ok := medianPerSecond(r, design.Cell{Strategy: st, Scenario: sc, CPU: cpu}); ok {
			series, names = append(series, s), append(names, fmt.Sprintf("%s (%d runs)", st, s.runs))
			end = max(end, float64(len(s.accepted)))
		}
	}
	if len(series) == 0 {
		return "", "", nil
	}
	title := sc
	if len(r.Experiment.CPUs) > 1 {
		title += ", " + cpu
	}
	top, err := perSecondPanel(ps, series, names, end, "Accepted records per lab second, "+title, "records accepted per lab second",
		func(s perSecondSeries) plotter.XYs { return s.accepted })
	if err != nil {
		return "", "", err
	}
	words := termsOf(r.Experiment)
	bottom, err := perSecondPanel(ps, series, names, end, "Write "+words.refusals+" per lab second, "+title, "write "+words.refusals+" per lab second",
		func(s perSecondSeries) plotter.XYs { return s.rejected })
	if err != nil {
		return "", "", err
	}
	svg, err := svgStacked([]*plot.Plot{top, bottom}, chartWidth, phasedChartHeight)
	caption := fmt.Sprintf("%s: accepted records (top) and write %s (bottom) in each lab second of the run, per strategy: "+
		"the median of each second over the strategy's valid runs (a run that had ended counts 0). Shaded and dashed: the phases.", title, words.refusals)
	return svg, caption, err
}

// perSecondPanel is one panel: a line per strategy, the phases shaded in
// turn, dashed lines at their boundaries and their names above the data.
func perSecondPanel(ps phases.PhasedScenario, series []perSecondSeries, names []string, end float64, title, ylabel string,
	get func(perSecondSeries) plotter.XYs) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "lab seconds since start"
	p.Y.Label.Text = ylabel
	p.X.Min, p.X.Max, p.Y.Min = 0, end, 0
	top := 0.0
	var lines []plot.Plotter
	for i, s := range series {
		xy := get(s)
		for _, pt := range xy {
			top = max(top, pt.Y)
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color = palette[i%len(palette)]
		l.LineStyle.Width = vg.Points(1.5)
		lines = append(lines, l)
		p.Legend.Add(names[i], l)
	}
	if top <= 0 {
		top = 1
	}
	// The data stays below the phases' names, which stay below the legend.
	roomForLegend(p, top*1.15, chartWidth, phasedChartHeight/2)
	// The phases' marks stop below the legend.
	ymax := p.Y.Max
	phaseNames, err := markPhases(p, ps, end, top)
	if err != nil {
		return nil, err
	}
	p.Add(lines...)
	p.Add(phaseNames)
	p.Y.Max = ymax
	return p, nil
}

// markPhases shades every other phase, draws a dashed line at each
// boundary and a dotted one at each restart, and returns their names,
// placed above top (the drain's too, when the data goes on after the
// phases), for the caller to draw over or under its data.
func markPhases(p *plot.Plot, ps phases.PhasedScenario, end, top float64) (*plotter.Labels, error) {
	band := top * 1.15
	dashed := func(x float64, c color.Color, dashes []vg.Length) error {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: band}})
		if err != nil {
			return err
		}
		l.Color, l.Dashes = c, dashes
		p.Add(l)
		return nil
	}
	var labels plotter.XYLabels
	for i, ph := range ps.Phases {
		lo, hi := ps.Start(i).Seconds(), ps.Start(i+1).Seconds()
		if i%2 == 1 {
			shade, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: 0}, {X: hi, Y: 0}, {X: hi, Y: band}, {X: lo, Y: band}})
			if err != nil {
				return nil, err
			}
			shade.Color, shade.LineStyle.Width = phaseShade, 0
			p.Add(shade)
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: (lo + hi) / 2, Y: top * 1.09})
		labels.Labels = append(labels.Labels, ph.Name)
	}
	phaseNames := len(labels.Labels)
	if end > ps.Total().Seconds() {
		p.X.Max = end * 1.04 // room for the drain's name
		labels.XYs = append(labels.XYs, plotter.XY{X: (ps.Total().Seconds() + end) / 2, Y: top * 1.09})
		labels.Labels = append(labels.Labels, records.DrainPhase)
		phaseNames++
	}
	for i := 1; i <= len(ps.Phases); i++ {
		if err := dashed(ps.Start(i).Seconds(), phaseMark, []vg.Length{vg.Points(4), vg.Points(3)}); err != nil {
			return nil, err
		}
	}
	for i, ph := range ps.Phases {
		if rs := ph.Restart; rs != nil {
			x := (ps.Start(i) + rs.After).Seconds()
			if err := dashed(x, palette[3], []vg.Length{vg.Points(1), vg.Points(2)}); err != nil {
				return nil, err
			}
			labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: top * 1.01})
			labels.Labels = append(labels.Labels, "restart "+string(rs.Signal))
		}
	}
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].XAlign = text.XCenter
		if i >= phaseNames { // a restart's: smaller, below the phases' names
			lb.TextStyle[i].Font.Size = vg.Points(8)
		}
	}
	return lb, nil
}
