package charts

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// timeline draws calls in flight per dependency over one run (series:
// each dependency's).
func timeline(rec resultsfile.RunRecord, series []callSeries) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Calls in flight, %s (run %d; mean per 1/%d of the run)", rec.Cell, rec.Run, timelinePoints)
	p.X.Label.Text = "lab seconds"
	p.Y.Label.Text = "calls in flight"
	p.Y.Min = 0
	top := 0.0
	for i, s := range series {
		xy := bucketMeans(rec.Client.Timeline, s.get, timelinePoints)
		for _, pt := range xy {
			top = max(top, pt.Y)
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color = palette[i]
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	roomForLegend(p, top, chartWidth, timelineHeight)
	return p, nil
}

// timelinePoints bounds a timeline's points: samples taken every few
// milliseconds over a minute would draw a barcode.
const timelinePoints = 120

// bucketMeans is the samples' mean value in at most n equal spans of the
// run, each at its span's middle: a line that reads as a line.
func bucketMeans(samples []records.Sample, get func(records.Sample) int, n int) plotter.XYs {
	if len(samples) <= n {
		xy := make(plotter.XYs, len(samples))
		for k, smp := range samples {
			xy[k] = plotter.XY{X: smp.T, Y: float64(get(smp))}
		}
		return xy
	}
	first, last := samples[0].T, samples[len(samples)-1].T
	span := (last - first) / float64(n)
	sums, counts := make([]float64, n), make([]int, n)
	for _, smp := range samples {
		b := min(int((smp.T-first)/span), n-1)
		sums[b] += float64(get(smp))
		counts[b]++
	}
	var xy plotter.XYs
	for b := range n {
		if counts[b] > 0 {
			xy = append(xy, plotter.XY{X: first + (float64(b)+0.5)*span, Y: sums[b] / float64(counts[b])})
		}
	}
	return xy
}
