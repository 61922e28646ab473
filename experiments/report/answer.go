package report

import (
	"math"
	"os"
	"path/filepath"

	"github.com/loadlab/loadlab/experiments/judge"
)

// writeAnswer writes the experiment's answer as image files to show
// elsewhere: accepted records per lab second per strategy and scenario,
// one accepted-CPU.svg per CPU setting, as report.html draws them.
func writeAnswer(dir string, r *judge.Results) error {
	for _, cpu := range r.Experiment.CPUs {
		p, err := grouped(r, cpu.Name, "accepted_per_second", "Accepted records per second, "+cpu.Name+" (median, min–max)", "records / lab second", math.NaN(), "")
		if err != nil || p == nil {
			return err
		}
		s, err := svg(p, chartWidth, chartHeight)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "accepted-"+cpu.Name+".svg"), []byte(s), 0o644); err != nil {
			return err
		}
	}
	return nil
}
