package charts

import (
	"bytes"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// svgPanels renders plots side by side, aligned, as one inline SVG.
func svgPanels(plots []*plot.Plot, w, h vg.Length) (string, error) {
	c := vgsvg.New(w, h)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: 8 * vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, draw.New(c))
	for i, p := range plots {
		tidy(p).Draw(canvases[0][i])
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	return inline(b.String()), nil
}

// svgStacked renders plots one above the other, aligned, as one inline
// SVG.
func svgStacked(plots []*plot.Plot, w, h vg.Length) (string, error) {
	c := vgsvg.New(w, h)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: 6 * vg.Millimeter, PadTop: vg.Millimeter, PadBottom: vg.Millimeter,
		PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	col := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		col[i] = []*plot.Plot{p}
	}
	canvases := plot.Align(col, tiles, draw.New(c))
	for i, p := range plots {
		tidy(p).Draw(canvases[i][0])
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	return inline(b.String()), nil
}

// svg renders p as inline SVG (without the XML prologue).
func svg(p *plot.Plot, w, h vg.Length) (string, error) {
	wt, err := tidy(p).WriterTo(w, h, "svg")
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return "", err
	}
	return inline(b.String()), nil
}

// inline drops the XML prologue of an SVG document, and gives its text
// the page's font family.
func inline(s string) string {
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return strings.ReplaceAll(s, "font-family:"+chartFamily+";", "font-family:"+pageFonts+";")
}

// The charts' text is laid out in Liberation Sans (gonum/plot carries its
// metrics) and drawn in the page's sans-serif family, one family
// throughout the report.
const (
	chartFamily = "Liberation Sans"
	pageFonts   = "system-ui,sans-serif"
)

func init() {
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	plotter.DefaultFont = plot.DefaultFont
}

// tidyTicks are gonum's default ticks labelled as numbers are written:
// 2.5 and 25, not 2.50 and 25.00.
type tidyTicks struct{}

func (tidyTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i, t := range ts {
		if t.Label != "" {
			v, _ := strconv.ParseFloat(strconv.FormatFloat(t.Value, 'g', 6, 64), 64)
			ts[i].Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ts
}

// tidy gives p's axes tidy tick labels where they have gonum's defaults.
func tidy(p *plot.Plot) *plot.Plot {
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		if _, ok := ax.Tick.Marker.(plot.DefaultTicks); ok {
			ax.Tick.Marker = tidyTicks{}
		}
	}
	return p
}
