package mockservice

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// The service's own collector, in a pedantic registry (which checks what it
// collects against what it describes), passes the metrics linter; so does
// the whole registry the service serves.
func TestCollectorIsPedanticAndLintClean(t *testing.T) {
	cfg := config.Default()
	cfg.TimeScale = 0.001
	svc, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc.Station(api.Records).Do(context.Background(), "a")
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collector{svc}, svc.queueWait, svc.service)
	if n, err := testutil.GatherAndCount(reg); err != nil || n == 0 {
		t.Fatalf("pedantic gather: %d series, %v", n, err)
	}
	for _, g := range []prometheus.Gatherer{reg, svc.Registry()} {
		problems, err := testutil.GatherAndLint(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	}
}
