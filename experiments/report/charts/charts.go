// Package charts draws an experiment's figures from its results, as
// inline SVG with gonum/plot: the lab's two figures, bar charts by
// strategy and scenario, calls in flight over a run, the phased
// scenarios' per-second lines, the adaptive limits and the offered load
// amplification, and the answer's charts. It writes no file and judges
// nothing: package report places the figures in report.html and writes
// the answer's as image files.
package charts

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/config"
)

// Chart sizes.
const (
	chartWidth     = 8 * vg.Inch
	chartHeight    = 4 * vg.Inch
	timelineHeight = 3 * vg.Inch
	// legendGap is the space kept between the tallest datum and the legend.
	legendGap = 6 * vg.Millimeter
)

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
}

// Figure is one chart of the report: a caption and its SVG.
type Figure struct {
	Caption string
	SVG     string
	// Headline: one of the charts that answer the experiment's questions,
	// shown first.
	Headline bool
}

// Figures draws the report's charts outside its phased and adaptive
// sections (Phased and Adaptive draw theirs): the lab write-up's two
// figures (C1's batch time by CPU setting; accepted records and write
// 503s per strategy under slow writes), accepted records per scenario and
// peak concurrent writes for each CPU setting, and calls in flight over
// one slow-write run per strategy. A chart whose cells the experiment
// lacks is left out.
func Figures(r *resultsfile.Results) ([]Figure, error) {
	sp := r.Experiment
	var out []Figure
	add := func(caption string, p *plot.Plot, h vg.Length, err error) error {
		if err != nil || p == nil {
			return err
		}
		s, err := svg(p, chartWidth, h)
		if err == nil {
			out = append(out, Figure{Caption: caption, SVG: s})
		}
		return err
	}
	first := sp.CPUs[0].Name
	p, err := c1ByCPU(r, chartWidth, chartHeight)
	if err := add("Figure 1 of the lab: C1 follows the CPU setting. Median batch time of the healthy scenario, whiskers min–max.", p, chartHeight, err); err != nil {
		return nil, err
	}
	if panels, err := slowWrite(r, first); err != nil {
		return nil, err
	} else if panels != nil {
		s, err := svgPanels(panels, chartWidth, chartHeight)
		if err != nil {
			return nil, err
		}
		out = append(out, Figure{Caption: "Figure 2 of the lab: under slow writes, accepted records per second and write 503s per strategy (" + first + ").", SVG: s})
	}
	words := termsOf(sp)
	for _, cpu := range sp.CPUs {
		if strategiesAt(r, cpu.Name) < 2 {
			continue // one strategy's bars say what the tables say
		}
		headline := cpu.Name == first
		p, err := grouped(r, cpu.Name, "accepted_per_second", acceptedTitle+cpu.Name+" (median, min–max)", "records / lab second", math.NaN(), "")
		if err := add("", p, chartHeight, err); err != nil {
			return nil, err
		}
		if p != nil {
			out[len(out)-1].Headline = headline
		}
		if anyAbove(r, cpu.Name, "write_rejections", 0) {
			p, err = grouped(r, cpu.Name, "write_rejections", "Write "+words.refusals+" per run, "+cpu.Name+" (median, min–max)", words.refusalsUnit, math.NaN(), "")
			if err := add("", p, chartHeight, err); err != nil {
				return nil, err
			}
			if p != nil {
				out[len(out)-1].Headline = headline
			}
		}
		ref := words.workers
		if ref == 0 {
			ref = math.NaN() // a write without a copy: no workers to draw
		}
		p, err = grouped(r, cpu.Name, "peak_concurrent_writes", "Peak concurrent writes offered to "+words.write+", "+cpu.Name,
			"writes at once", ref, words.workersLabel)
		if err := add("", p, chartHeight, err); err != nil {
			return nil, err
		}
	}
	// Calls in flight over one run per strategy: the first CPU setting,
	// slow-write if present.
	scenario := sp.Scenarios[0]
	if slices.Contains(sp.Scenarios, config.ProfileSlowWrite) {
		scenario = config.ProfileSlowWrite
	}
	for _, st := range sp.Strategies {
		for _, rec := range r.Runs {
			if rec.Cell == (design.Cell{Strategy: st, Scenario: scenario, CPU: first}) && rec.Valid() && rec.Client != nil && len(rec.Client.Timeline) > 0 {
				p, err := timeline(rec, words.calls)
				if err := add("", p, timelineHeight, err); err != nil {
					return nil, err
				}
				break
			}
		}
	}
	return out, nil
}

// strategiesAt counts the strategies with a cell at the CPU setting.
func strategiesAt(r *resultsfile.Results, cpu string) int {
	n := 0
	for _, st := range r.Experiment.Strategies {
		for _, sc := range r.Experiment.Scenarios {
			if _, ok := r.Summary(design.Cell{Strategy: st, Scenario: sc, CPU: cpu}); ok {
				n++
				break
			}
		}
	}
	return n
}

// anyAbove says whether any cell at the CPU setting had a run with the
// metric above v (a chart of zeros shows nothing).
func anyAbove(r *resultsfile.Results, cpu, metric string, v float64) bool {
	for _, cs := range r.Cells {
		if s, ok := cs.Stats[metric]; ok && cs.Cell.CPU == cpu && s.N > 0 && s.Max > v {
			return true
		}
	}
	return false
}

// bar is one bar with its whisker.
type bar struct {
	x      float64
	series int // colour and legend entry
	s      resultsfile.Stat
}

// barChart draws bars with min–max whiskers, nominal ticks, one legend
// entry per series (none when series is nil: the ticks name the bars), and
// an optional dashed reference line. Its y axis leaves room above the
// tallest whisker for the legend, for a chart of size w × h.
func barChart(title, ylabel string, series []string, bars []bar, ticks []float64, labels []string, line float64, lineLabel string, w, h vg.Length) (*plot.Plot, error) {
	if len(bars) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	var pts errPoints
	legend := map[int]bool{}
	top := 0.0
	for _, b := range bars {
		bc, err := plotter.NewBarChart(plotter.Values{b.s.Median}, vg.Points(14))
		if err != nil {
			return nil, err
		}
		bc.XMin = b.x
		bc.Color = palette[b.series%len(palette)]
		bc.LineStyle.Width = 0
		p.Add(bc)
		if series != nil && !legend[b.series] {
			p.Legend.Add(series[b.series], bc)
			legend[b.series] = true
		}
		pts.x, pts.y = append(pts.x, b.x), append(pts.y, b.s.Median)
		pts.lo, pts.hi = append(pts.lo, b.s.Min), append(pts.hi, b.s.Max)
		top = max(top, b.s.Max)
	}
	eb, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return nil, err
	}
	eb.LineStyle.Width = vg.Points(1.2)
	p.Add(eb)
	lo, hi := slices.Min(ticks)-1, slices.Max(ticks)+1
	for _, b := range bars {
		lo, hi = min(lo, b.x-1), max(hi, b.x+1)
	}
	p.X.Min, p.X.Max = lo, hi
	p.X.Tick.Marker = nominalTicks{at: ticks, labels: labels}
	if !math.IsNaN(line) {
		l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: line}, {X: hi, Y: line}})
		if err != nil {
			return nil, err
		}
		l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(lineLabel, l)
		top = max(top, line)
	}
	roomForLegend(p, top, w, h)
	return p, nil
}

// roomForLegend sets the y axis so that the data, up to top, stays below
// the legend drawn at the top of the data area (gonum draws the legend
// inside it).
func roomForLegend(p *plot.Plot, top float64, w, h vg.Length) {
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Padding = vg.Points(2)
	p.Legend.XOffs = -vg.Points(8) // keep the thumbnails off the edge
	if top <= 0 {
		top = 1
	}
	p.Y.Max = top // a first guess, for the axis' own size
	dc := p.DataCanvas(draw.New(vgsvg.New(w, h)))
	avail := dc.Max.Y - dc.Min.Y
	r := p.Legend.Rectangle(dc)
	free := avail - (r.Max.Y - r.Min.Y) - legendGap
	if free < avail/3 { // a legend this tall would squash the data: let it overlap
		free = avail / 3
	}
	p.Y.Max = top * float64(avail) / float64(free)
}

// grouped draws a metric's median per strategy, grouped by scenario, for
// one CPU setting.
func grouped(r *resultsfile.Results, cpu, metric, title, ylabel string, line float64, lineLabel string) (*plot.Plot, error) {
	sp := r.Experiment
	n := len(sp.Strategies) + 1
	var bars []bar
	var ticks []float64
	for ji, sc := range sp.Scenarios {
		ticks = append(ticks, float64(ji*n)+float64(len(sp.Strategies)-1)/2)
		for si, st := range sp.Strategies {
			cs, ok := r.Summary(design.Cell{Strategy: st, Scenario: sc, CPU: cpu})
			if s, sok := cs.Stats[metric]; ok && sok && s.N > 0 {
				bars = append(bars, bar{x: float64(ji*n + si), series: si, s: s})
			}
		}
	}
	return barChart(title, ylabel, sp.Strategies, bars, ticks, sp.Scenarios, line, lineLabel, chartWidth, chartHeight)
}

// c1ByCPU is the lab's first figure: C1's batch time, healthy, for every
// CPU setting; nil when fewer than two settings have it.
func c1ByCPU(r *resultsfile.Results, w, h vg.Length) (*plot.Plot, error) {
	sp := r.Experiment
	var bars []bar
	var ticks []float64
	var labels []string
	for i, cpu := range sp.CPUs {
		cs, ok := r.Summary(design.Cell{Strategy: "C1", Scenario: config.ProfileHealthy, CPU: cpu.Name})
		if s, sok := cs.Stats["duration_seconds"]; ok && sok && s.N > 0 {
			bars = append(bars, bar{x: float64(i), series: i, s: s})
			ticks, labels = append(ticks, float64(i)), append(labels, cpu.Name)
		}
	}
	if len(bars) < 2 {
		return nil, nil
	}
	return barChart(fmt.Sprintf("C1 (records in flight = GOMAXPROCS): %d healthy records", sp.Records), "batch time, lab seconds",
		nil, bars, ticks, labels, math.NaN(), "", w, h)
}

// slowWrite is the lab's second figure: per strategy under slow writes,
// accepted records per second in one panel, write 503s in the other; nil
// when the experiment has no slow-write cell on this CPU setting.
func slowWrite(r *resultsfile.Results, cpu string) ([]*plot.Plot, error) {
	sp := r.Experiment
	var accepted, rejected []bar
	var ticks []float64
	var labels []string
	for si, st := range sp.Strategies {
		cs, ok := r.Summary(design.Cell{Strategy: st, Scenario: config.ProfileSlowWrite, CPU: cpu})
		a, aok := cs.Stats["accepted_per_second"]
		w, wok := cs.Stats["write_rejections"]
		if !ok || !aok || !wok || a.N == 0 {
			continue
		}
		accepted = append(accepted, bar{x: float64(si), series: si, s: a})
		rejected = append(rejected, bar{x: float64(si), series: si, s: w})
		ticks, labels = append(ticks, float64(si)), append(labels, st)
	}
	if len(accepted) == 0 {
		return nil, nil
	}
	pw := chartWidth / 2
	left, err := barChart("Accepted records per second", "records / lab second", nil, accepted, ticks, labels, math.NaN(), "", pw, chartHeight)
	if err != nil {
		return nil, err
	}
	right, err := barChart("Write 503s per run", "503 answers", nil, rejected, ticks, labels, math.NaN(), "", pw, chartHeight)
	if err != nil {
		return nil, err
	}
	return []*plot.Plot{left, right}, nil
}

// errPoints are whiskers from min to max around each median.
type errPoints struct{ x, y, lo, hi []float64 }

func (e errPoints) Len() int                        { return len(e.x) }
func (e errPoints) XY(i int) (float64, float64)     { return e.x[i], e.y[i] }
func (e errPoints) YError(i int) (float64, float64) { return e.y[i] - e.lo[i], e.hi[i] - e.y[i] }

type nominalTicks struct {
	at     []float64
	labels []string
}

func (t nominalTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for i, x := range t.at {
		out = append(out, plot.Tick{Value: x, Label: t.labels[i]})
	}
	return out
}
