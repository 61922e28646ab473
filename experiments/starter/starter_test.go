package starter_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/starter"
)

// A starter experiment on one's own services loads as written, with its
// hypotheses: every dependency against its copy, as-probed and a slow and
// a smaller scenario per dependency, C2 against advised.
func TestStarterLoads(t *testing.T) {
	dir := exptest.OwnServices(t, t.TempDir())
	p, err := pipeline.Load(filepath.Join(dir, "shop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	probes := map[string]probe.Result{}
	for _, d := range p.Names() {
		if probes[d], err = probe.ReadFile(filepath.Join(dir, d+".json")); err != nil {
			t.Fatal(err)
		}
	}
	at := starter.Paths{Pipeline: "shop.yaml", Probes: map[string]string{"stock": "stock.json", "orders": "orders.json"}}
	exp, hyp, err := starter.Files("mine", p, probes, at)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "experiment.yaml", exp))
	if err != nil {
		t.Fatalf("%v\n%s", err, exp)
	}
	hs, err := design.LoadHypotheses(exptest.WriteFile(t, dir, "hypotheses.yaml", hyp), spec)
	if err != nil {
		t.Fatalf("%v\n%s", err, hyp)
	}
	want := []string{design.AsProbed, "slow-stock", "half-rate-stock", "slow-orders", "half-orders"}
	if !slices.Equal(spec.Scenarios, want) || len(spec.Cells()) != 10 || len(hs) != 6 || *spec.Changes["half-orders"]["orders"].Workers != 0.5 || *spec.Changes["half-rate-stock"]["stock"].Rate != 0.5 {
		t.Errorf("scenarios %v, %d cells, %d hypotheses", spec.Scenarios, len(spec.Cells()), len(hs))
	}
	if got := spec.Advise.Probes["orders"]; len(got.Concurrency) != len(probes["orders"].Steps) || got.Body != p.Dependency("orders").Body {
		t.Errorf("the advise section's orders probe %+v", got)
	}
	delete(at.Probes, "stock")
	if _, _, err := starter.Files("mine", p, probes, at); err == nil || !strings.Contains(err.Error(), "no probe of stock") {
		t.Errorf("a dependency without a probe: %v", err)
	}
}

// The starter's call timeout is ten times the slowest success its probes
// saw, in whole seconds, and at least 2 s; its permit wait five times
// that.
func TestStarterTimeoutsFromTheProbes(t *testing.T) {
	p := pipeline.Lab()
	slow, fast := 0.35, 0.01
	probes := map[string]probe.Result{
		"enrichment": {Steps: []probe.Step{{Concurrency: 1, MaxSeconds: &fast}}},
		"records":    {Steps: []probe.Step{{Concurrency: 1, MaxSeconds: &fast}, {Concurrency: 2, MaxSeconds: &slow}}},
	}
	at := starter.Paths{Pipeline: "p.yaml", Probes: map[string]string{"enrichment": "e.json", "records": "r.json"}}
	for _, c := range []struct {
		slowest float64
		want    string
	}{{0.35, "call_timeout: 4s\npermit_timeout: 20s\n"}, {0.01, "call_timeout: 2s\npermit_timeout: 10s\n"}} {
		slow = c.slowest
		exp, _, err := starter.Files("t", p, probes, at)
		if err != nil || !strings.Contains(exp, c.want) {
			t.Errorf("slowest success %v s: %v\n%s", c.slowest, err, exp)
		}
	}
}
