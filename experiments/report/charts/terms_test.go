package charts

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/own"
	"github.com/loadlab/loadlab/mockservice/config"
)

// The charts of an experiment on one's own services speak of its write
// dependency, its refusals and its copy's workers, and draw each
// dependency's calls in flight from the samples' calls by name; the
// lab's speak of the system of record, its 503s and its 6 workers.
func TestChartTermsOfOwnServices(t *testing.T) {
	p, err := pipeline.Parse("shop.yaml", []byte(exptest.OwnPipeline))
	if err != nil {
		t.Fatal(err)
	}
	var orders config.Virtual
	orders.Station.Workers = 3
	sp := design.Spec{Own: &own.Own{Pipeline: p, Copies: map[string]config.Virtual{"orders": orders}}}
	w := termsOf(sp)
	if w.write != "orders" || w.refusals != "refusals" || w.workers != 3 || w.workersLabel != "3 workers (orders as probed)" || len(w.calls) != 2 {
		t.Fatalf("own terms %+v", w)
	}
	smp := records.Sample{Enrichment: 9, Records: 9, Calls: map[string]int{"stock": 4, "orders": 2}}
	if w.calls[0].name != "stock" || w.calls[0].get(smp) != 4 || w.calls[1].name != "orders (writes)" || w.calls[1].get(smp) != 2 {
		t.Errorf("own series %s=%d, %s=%d", w.calls[0].name, w.calls[0].get(smp), w.calls[1].name, w.calls[1].get(smp))
	}
	lab := termsOf(design.Spec{})
	if lab.write != "the system of record" || lab.refusals != "503s" || lab.workers != 6 || !strings.HasPrefix(lab.calls[1].name, "records") || lab.calls[0].get(smp) != 9 {
		t.Errorf("lab terms %+v", lab)
	}
}
