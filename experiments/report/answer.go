package report

import (
	"path/filepath"

	"github.com/loadlab/loadlab/experiments/report/charts"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/atomicfile"
)

// writeAnswer writes the experiment's answer as image files to show
// elsewhere, as report.html draws them, for each CPU setting with more
// than one strategy: accepted records per lab second per strategy and
// scenario (accepted-CPU.svg) and, when any run got one, write 503s
// (rejected-CPU.svg).
func writeAnswer(dir string, r *resultsfile.Results) error {
	for _, cpu := range r.Experiment.CPUs {
		for _, a := range charts.Answers(r, cpu.Name) {
			s, err := a.SVG(r)
			if err != nil || s == "" {
				return err
			}
			if err := atomicfile.Write(filepath.Join(dir, answerFile(a)), []byte(s)); err != nil {
				return err
			}
		}
	}
	return nil
}

// answerFile is the name of an answer's image file, beside report.md.
func answerFile(a charts.Answer) string { return a.Name + "-" + a.CPU + ".svg" }
