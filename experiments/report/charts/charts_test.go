package charts

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// legendClear reports whether, drawn at w × h, the plot's legend sits
// wholly above the value top, and the y axis reaches above top.
func legendClear(t *testing.T, p *plot.Plot, top float64, w, h vg.Length) {
	t.Helper()
	dc := p.DataCanvas(draw.New(vgsvg.New(w, h)))
	_, y := p.Transforms(&dc)
	r := p.Legend.Rectangle(dc)
	// gonum draws the legend from the top of the area above the x axis,
	// which is at or above the data canvas' top.
	bottom := dc.Max.Y - (r.Max.Y - r.Min.Y)
	if y(top) > bottom {
		t.Errorf("%q: the tallest value (%g) is drawn at %.1f pt, above the legend's bottom at %.1f pt", p.Title.Text, top, y(top), bottom)
	}
	if !(p.Y.Max > top) {
		t.Errorf("%q: y axis ends at %g, no room above %g", p.Title.Text, p.Y.Max, top)
	}
}

func TestChartsKeepTheLegendClearOfTheData(t *testing.T) {
	series := []string{"C1", "C2", "C3", "C4"}
	var bars []bar
	for i, m := range []float64{4, 65, 62, 55} {
		bars = append(bars, bar{x: float64(i), series: i, s: resultsfile.Stat{Median: m, Min: m - 1, Max: m + 2, N: 5}})
	}
	ticks, labels := []float64{1.5}, []string{"healthy"}
	p, err := barChart("accepted", "records / lab second", series, bars, ticks, labels, math.NaN(), "", chartWidth, chartHeight)
	if err != nil {
		t.Fatal(err)
	}
	legendClear(t, p, 67, chartWidth, chartHeight)
	// A reference line above every bar is data too.
	p, err = barChart("peak writes", "writes", series, bars[:1], ticks, labels, 80, "80 workers", chartWidth, chartHeight)
	if err != nil {
		t.Fatal(err)
	}
	legendClear(t, p, 80, chartWidth, chartHeight)
	// Half-width panels keep the rule.
	p, err = barChart("503s", "answers", nil, bars, ticks, labels, math.NaN(), "", chartWidth/2, chartHeight)
	if err != nil {
		t.Fatal(err)
	}
	legendClear(t, p, 67, chartWidth/2, chartHeight)

	rec := resultsfile.RunRecord{Cell: design.Cell{Strategy: "C4", Scenario: "slow-write", CPU: "cpus-1"}, Run: 1, Client: &records.Result{}}
	for i := range 100 {
		rec.Client.Timeline = append(rec.Client.Timeline, records.Sample{T: float64(i) / 10, Enrichment: i % 25, Records: 6})
	}
	p, err = timeline(rec, termsOf(design.Spec{}).calls)
	if err != nil {
		t.Fatal(err)
	}
	legendClear(t, p, 24, chartWidth, timelineHeight)
}

// The committed replication draws both of the lab's figures and one
// timeline per strategy, each captioned or titled.
func TestReportFiguresOfTheCommittedResults(t *testing.T) {
	res, err := resultsfile.ReadResults("../../results/replication-v4/results.json")
	if err != nil {
		t.Fatal(err)
	}
	figs, err := Figures(res)
	if err != nil {
		t.Fatal(err)
	}
	var lab, timelines int
	for _, f := range figs {
		if strings.HasPrefix(f.Caption, "Figure ") {
			lab++
		}
		if strings.Contains(f.SVG, "Calls in flight") {
			timelines++
		}
		if !strings.HasPrefix(f.SVG, "<svg") {
			t.Errorf("figure %q is not inline SVG", f.Caption)
		}
	}
	if lab != 2 || timelines != len(res.Experiment.Strategies) {
		t.Errorf("%d lab figures, %d timelines; want 2 and %d", lab, timelines, len(res.Experiment.Strategies))
	}
}
