package probe

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chart size and colours (the experiment report's palette).
const (
	chartWidth  = 8 * vg.Inch
	chartHeight = 3.5 * vg.Inch
)

var (
	blue   = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	orange = color.RGBA{0xff, 0x7f, 0x0e, 0xff}
	green  = color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
	red    = color.RGBA{0xd6, 0x27, 0x28, 0xff}
	grey   = color.RGBA{0x88, 0x88, 0x88, 0xff}
	dashed = []vg.Length{vg.Points(5), vg.Points(3)}
	dotted = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
)

// figure is one chart: a caption and its inline SVG (ours, unescaped).
type figure struct {
	Caption string
	SVG     template.HTML
}

// charts renders the plots as inline SVG.
func charts(r Result) ([]figure, error) {
	ps, err := plots(r)
	if err != nil {
		return nil, err
	}
	var out []figure
	for _, p := range ps {
		s, err := svg(p.plot)
		if err != nil {
			return nil, err
		}
		out = append(out, figure{Caption: p.caption, SVG: template.HTML(s)}) // #nosec G203: our own SVG
	}
	return out, nil
}

type captioned struct {
	caption string
	plot    *plot.Plot
}

// plots draws successes per second against concurrency, with the USL
// fit, the plateau, the knee and where rejections begin; and p50 and p99
// latency against concurrency, with the knee. None without steps.
func plots(r Result) ([]captioned, error) {
	if len(r.Steps) == 0 {
		return nil, nil
	}
	a := r.Analysis
	var ok, p50, p99 plotter.XYs
	top, topLat, hiN := 0.0, 0.0, 1.0
	for _, s := range r.Steps {
		n := float64(s.Concurrency)
		hiN = max(hiN, n)
		ok = append(ok, plotter.XY{X: n, Y: s.OKPerSecond})
		top = max(top, s.OKPerSecond)
		if s.P99Seconds != nil {
			p50 = append(p50, plotter.XY{X: n, Y: *s.P50Seconds * 1000})
			p99 = append(p99, plotter.XY{X: n, Y: *s.P99Seconds * 1000})
			topLat = max(topLat, *s.P99Seconds*1000)
		}
	}
	tp := plot.New()
	tp.Title.Text = "Successes per second against concurrency"
	tp.X.Label.Text = "concurrency (users in closed loop)"
	tp.Y.Label.Text = "ok / s"
	if err := addSeries(tp, ok, blue, "measured ok/s"); err != nil {
		return nil, err
	}
	if u := a.USL; u.Sigma != nil {
		var fit plotter.XYs
		for i := range 200 {
			n := 1 + (hiN-1)*float64(i)/199
			if y := u.Throughput(n); !math.IsNaN(y) && !math.IsInf(y, 0) {
				fit = append(fit, plotter.XY{X: n, Y: y})
				top = max(top, y)
			}
		}
		label := fmt.Sprintf("USL fit (σ %.3f, κ %.4f, r² %.2f)", *u.Sigma, *u.Kappa, *u.R2)
		if !u.FitOK {
			label += ", fits badly"
		}
		if err := addLine(tp, fit, orange, dashed, label); err != nil {
			return nil, err
		}
	}
	if a.PlateauPerSecond > 0 {
		line := plotter.XYs{{X: 1, Y: a.PlateauPerSecond}, {X: hiN, Y: a.PlateauPerSecond}}
		if err := addLine(tp, line, grey, dotted, fmt.Sprintf("plateau %.1f ok/s", a.PlateauPerSecond)); err != nil {
			return nil, err
		}
	}
	// The y axes leave the top third to the legend, above the data.
	if err := marks(tp, a, top*1.5); err != nil {
		return nil, err
	}
	tp.Y.Min, tp.Y.Max = 0, max(top*1.5, 1)
	lp := plot.New()
	lp.Title.Text = "Latency of successes against concurrency"
	lp.X.Label.Text = "concurrency (users in closed loop)"
	lp.Y.Label.Text = "ms"
	if err := addSeries(lp, p99, red, "p99"); err != nil {
		return nil, err
	}
	if err := addSeries(lp, p50, blue, "p50"); err != nil {
		return nil, err
	}
	if err := marks(lp, a, topLat*1.5); err != nil {
		return nil, err
	}
	lp.Y.Min, lp.Y.Max = 0, max(topLat*1.5, 1)
	out := []captioned{
		{"Throughput: successes per second at each step, the USL fit, the plateau and the knee.", tp},
		{"Latency: p50 and p99 of the successes at each step, and the knee.", lp},
	}
	for _, c := range out {
		c.plot.Legend.Top, c.plot.Legend.Left = true, true
		c.plot.Legend.XOffs = vg.Points(8)
		c.plot.Legend.TextStyle.Font.Size = vg.Points(9)
		c.plot.X.Min, c.plot.X.Max = 0, hiN+1
	}
	return out, nil
}

// marks draws the knee and the start of rejections as vertical lines up
// to top.
func marks(p *plot.Plot, a Analysis, top float64) error {
	if top <= 0 {
		top = 1
	}
	if a.Knee != nil {
		k := float64(*a.Knee)
		if err := addLine(p, plotter.XYs{{X: k, Y: 0}, {X: k, Y: top}}, green, nil, fmt.Sprintf("knee: concurrency %d", *a.Knee)); err != nil {
			return err
		}
	}
	if a.RejectionsBeginAt != nil {
		k := float64(*a.RejectionsBeginAt)
		return addLine(p, plotter.XYs{{X: k, Y: 0}, {X: k, Y: top}}, red, dashed, fmt.Sprintf("rejections begin: %d", *a.RejectionsBeginAt))
	}
	return nil
}

func addSeries(p *plot.Plot, xy plotter.XYs, c color.Color, label string) error {
	if len(xy) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(xy)
	if err != nil {
		return err
	}
	l.Color, s.Color = c, c
	s.Shape = draw.CircleGlyph{}
	p.Add(l, s)
	p.Legend.Add(label, l, s)
	return nil
}

func addLine(p *plot.Plot, xy plotter.XYs, c color.Color, dashes []vg.Length, label string) error {
	if len(xy) < 2 {
		return nil
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.Color, l.Dashes = c, dashes
	l.Width = vg.Points(1.5)
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

// svg renders p as inline SVG, without the XML prologue.
func svg(p *plot.Plot) (string, error) {
	wt, err := p.WriterTo(chartWidth, chartHeight, "svg")
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return s, nil
}
