package design

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loadlab/loadlab/experiments/exptest"
)

// Whatever bytes an experiment file holds, LoadSpec returns a spec that
// validates or an error; it never panics. The seeds run in go test.
func FuzzLoadSpec(f *testing.F) {
	for _, p := range []string{"../replication.yaml", "../container.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(exptest.TinySpec))
	f.Add([]byte("runs: -1\nrecords: 1e99\n"))
	f.Add([]byte("cpus: [{name: a, cpus: 1, cpuset: 2}]\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "spec.yaml")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadSpec(p)
		if err == nil {
			if verr := s.Validate(); verr != nil {
				t.Errorf("LoadSpec accepted a spec that does not validate: %v", verr)
			}
		}
	})
}

// Whatever bytes a hypotheses file holds, LoadHypotheses returns
// hypotheses whose cells are the experiment's, or an error; it never
// panics.
func FuzzLoadHypotheses(f *testing.F) {
	spec, err := LoadSpec("../replication.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range []string{"../hypotheses-v5.yaml", "../container-hypotheses-v4.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(exptest.TinyHypotheses))
	f.Add([]byte("hypotheses:\n  - {id: x, claim: c, metric: errors, cell: {strategy: C4, scenario: healthy, cpu: cpus-1}, op: between, threshold: [2, 1]}\n"))
	dir := f.TempDir()
	cells := spec.Cells()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "h.yaml")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		hs, err := LoadHypotheses(p, spec)
		if err != nil {
			return
		}
		for _, h := range hs {
			for _, c := range h.AllCells() {
				if knownCell(spec, cells, c) != nil {
					t.Errorf("%s: accepted cell %s", h.ID, c)
				}
			}
		}
	})
}
