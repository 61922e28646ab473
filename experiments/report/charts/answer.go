package charts

import (
	"math"

	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// Answer is one of the charts that answer the experiment on one CPU
// setting, which the report also writes as an image file of its own.
type Answer struct {
	// Name says what it shows, as the image file's name begins:
	// "accepted" or "rejected".
	Name, CPU string
	// Alt says it in words, for a reader without the image.
	Alt                   string
	metric, title, ylabel string
}

// Answers are the answer's charts on a CPU setting with more than one
// strategy: accepted records per lab second per strategy and scenario and,
// when any run got one, write 503s. A setting of one strategy has none:
// its bars would say what the tables say.
func Answers(r *resultsfile.Results, cpu string) []Answer {
	if strategiesAt(r, cpu) < 2 {
		return nil
	}
	out := []Answer{{Name: "accepted", CPU: cpu, Alt: "Accepted records per lab second by strategy and scenario, " + cpu,
		metric: "accepted_per_second", title: acceptedTitle, ylabel: "records / lab second"}}
	if anyAbove(r, cpu, "write_rejections", 0) {
		a := Answer{Name: "rejected", CPU: cpu, Alt: "Write 503s per run by strategy and scenario, " + cpu,
			metric: "write_rejections", title: rejectedTitle, ylabel: "503 answers"}
		if r.Experiment.Own != nil { // one's own write may refuse with 429 or 503
			a.Alt, a.title, a.ylabel = "Writes refused per run by strategy and scenario, "+cpu, "Writes refused per run, ", "refusals"
		}
		out = append(out, a)
	}
	return out
}

// SVG draws the chart as report.html does, "" when no cell has its figure.
func (a Answer) SVG(r *resultsfile.Results) (string, error) {
	p, err := grouped(r, a.CPU, a.metric, a.title+a.CPU+" (median, min–max)", a.ylabel, math.NaN(), "")
	if err != nil || p == nil {
		return "", err
	}
	return svg(p, chartWidth, chartHeight)
}

// The headline charts' titles, before the CPU setting.
const (
	acceptedTitle = "Accepted records per lab second, "
	rejectedTitle = "Write 503s per run, "
)
