package report

import (
	"math"
	"path/filepath"

	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/mockservice/atomicfile"
)

// writeAnswer writes the experiment's answer as image files to show
// elsewhere, as report.html draws them, for each CPU setting with more
// than one strategy: accepted records per lab second per strategy and
// scenario (accepted-CPU.svg) and, when any run got one, write 503s
// (rejected-CPU.svg).
func writeAnswer(dir string, r *judge.Results) error {
	for _, cpu := range r.Experiment.CPUs {
		if strategiesAt(r, cpu.Name) < 2 {
			continue
		}
		charts := []struct{ file, metric, title, ylabel string }{
			{"accepted-", "accepted_per_second", acceptedTitle, "records / lab second"},
			{"rejected-", "write_rejections", rejectedTitle, "503 answers"},
		}
		for i, c := range charts {
			if i > 0 && !anyAbove(r, cpu.Name, c.metric, 0) {
				continue
			}
			p, err := grouped(r, cpu.Name, c.metric, c.title+cpu.Name+" (median, min–max)", c.ylabel, math.NaN(), "")
			if err != nil || p == nil {
				return err
			}
			s, err := svg(p, chartWidth, chartHeight)
			if err != nil {
				return err
			}
			if err := atomicfile.Write(filepath.Join(dir, c.file+cpu.Name+".svg"), []byte(s)); err != nil {
				return err
			}
		}
	}
	return nil
}

// The headline charts' titles, before the CPU setting.
const (
	acceptedTitle = "Accepted records per lab second, "
	rejectedTitle = "Write 503s per run, "
)
