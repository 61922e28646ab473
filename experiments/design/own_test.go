package design_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
)

// An experiment on one's own services loads its pipeline, fits a copy of
// each dependency from its probe, reads each scenario's changes and the
// strategy files, each relative to the experiment file.
func TestOwnServicesLoad(t *testing.T) {
	dir := exptest.OwnServices(t, t.TempDir())
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "own.yaml", exptest.OwnSpec))
	if err != nil {
		t.Fatal(err)
	}
	o := spec.Own
	if o == nil || o.Pipeline.Name != "shop" || o.Write() != "orders" {
		t.Fatalf("own services %+v", o)
	}
	orders, stock := o.Copies["orders"], o.Copies["stock"]
	if orders.Station.Workers != 3 || orders.Station.Queue != 3 || orders.Station.RejectStatus != 503 {
		t.Errorf("orders' copy %+v: want 3 workers, 3 slots, 503", orders.Station)
	}
	if stock.Rate == nil || stock.Rate.Status != 429 {
		t.Errorf("stock's copy has no token bucket answering 429: %+v", stock.Rate)
	}
	if st, ok := spec.Strategy(design.Cell{Strategy: "mine"}, nil); !ok || st.Name != "mine" || st.Permits["orders"] != 3 {
		t.Errorf("strategy mine: %+v, %v", st, ok)
	}
	if got := spec.Scenarios; len(got) != 3 || got[1] != "slow-orders" {
		t.Errorf("scenarios %v", got)
	}
	slow, half, as := spec.CopiesFor("slow-orders")["orders"], spec.CopiesFor("half-orders")["orders"], spec.CopiesFor(design.AsProbed)["orders"]
	if slow.Service.Longest() != 3*orders.Service.Longest() || slow.Station != orders.Station {
		t.Errorf("slow-orders: longest service %v, station %+v; want 3 × %v, as probed", slow.Service.Longest(), slow.Station, orders.Service.Longest())
	}
	if half.Station.Workers != 2 || half.Service.Longest() != orders.Service.Longest() { // 1.5 rounds to 2
		t.Errorf("half-orders: %d workers, want 2 (half of 3, rounded)", half.Station.Workers)
	}
	if as.Station != orders.Station || spec.CopiesFor("slow-orders")["stock"].Service.Longest() != stock.Service.Longest() {
		t.Error("a scenario changed what it does not name")
	}
}

// Each mistake in an experiment on one's own services is refused before
// anything runs, naming the file, the line and the field.
func TestOwnServicesMistakes(t *testing.T) {
	dir := exptest.OwnServices(t, t.TempDir())
	for _, c := range []struct{ name, from, to, want string }{
		{"unknown change", "orders: {service_time: 3}", "orders: {service_tme: 3}", `own.yaml:17: scenarios[1].orders: service_tme: unknown change; did you mean "service_time"?`},
		{"no such copy", "orders: {workers: 0.5}", "order: {workers: 0.5}", `scenarios[2].order: no virtual copy order (there are orders, stock); did you mean "orders"?`},
		{"a zero", "{workers: 0.5}", "{workers: 0}", "scenarios[2].orders.workers: 0 must be > 0"},
		{"rate of a station", "{workers: 0.5}", "{rate: 2}", "the copy of orders has no rate limit"},
		{"a lab scenario", "  - as-probed\n", "  - healthy\n", `scenarios[0]: "healthy": a scenario of one's own services is as-probed`},
		{"lab budgets", "[C2, advised, mine]", "[C2, C4]", "strategies[1]: C4: "},
		{"a copy missing", "  stock: {probe: stock.json}\n", "", "time_scale: 0.1: stock has no virtual copy, so its calls go to its base_url, a real service"},
		{"a probe missing", "probe: orders.json", "probe: nope.json", "virtual.orders.probe: "},
		{"a dependency missing", "  stock: {probe: stock.json}\n", "  stok: {probe: stock.json}\n", `virtual.stok: pipeline shop has no dependency stok (it has stock, orders); did you mean "stock"?`},
	} {
		text := strings.Replace(exptest.OwnSpec, c.from, c.to, 1)
		if text == exptest.OwnSpec {
			t.Fatalf("%s: %q is not in the spec", c.name, c.from)
		}
		_, err := design.LoadSpec(exptest.WriteFile(t, dir, "own.yaml", text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %q", c.name, err, c.want)
		}
	}
}

// A copy's queue slots and a rate-limited copy's rate change by their
// multiples; nothing else of the copy does.
func TestQueueAndRateChanges(t *testing.T) {
	dir := exptest.OwnServices(t, t.TempDir())
	text := strings.Replace(exptest.OwnSpec, "  - name: half-orders\n", "  - name: no-queue\n    orders: {queue: 0}\n  - name: half-rate\n    stock: {rate: 0.5}\n  - name: half-orders\n", 1)
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "own.yaml", text))
	if err != nil {
		t.Fatal(err)
	}
	orders, stock := spec.Own.Copies["orders"], spec.Own.Copies["stock"]
	noQueue, halfRate := spec.CopiesFor("no-queue")["orders"], spec.CopiesFor("half-rate")["stock"]
	if noQueue.Station.Queue != 0 || noQueue.Station.Workers != orders.Station.Workers || orders.Station.Queue != 3 {
		t.Errorf("no-queue: %+v (as fitted %+v)", noQueue.Station, orders.Station)
	}
	if halfRate.Rate.PerSecond != stock.Rate.PerSecond/2 || halfRate.Rate.Burst != stock.Rate.Burst || spec.Own.Copies["stock"].Rate.PerSecond != stock.Rate.PerSecond {
		t.Errorf("half-rate: %+v (as fitted %+v)", halfRate.Rate, stock.Rate)
	}
}

// The services an experiment file names load the same from any working
// folder: the results of a run begun in one and resumed from another
// hold one design.
func TestOwnServicesLoadAlikeFromAnywhere(t *testing.T) {
	dir := exptest.OwnServices(t, t.TempDir())
	file := exptest.WriteFile(t, dir, "own.yaml", exptest.OwnSpec)
	abs, err := design.LoadSpec(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	local, err := design.LoadSpec("own.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(abs)
	b, _ := json.Marshal(local)
	if string(a) != string(b) {
		t.Errorf("loaded from %s and from its folder, the experiment differs:\n%s\n%s", file, a, b)
	}
}

// Hypotheses on one's own services may read each dependency's peak calls
// and its copy's refusals; a dependency the pipeline lacks is refused.
func TestOwnMetricsInHypotheses(t *testing.T) {
	dir := exptest.OwnServices(t, t.TempDir())
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "own.yaml", exptest.OwnSpec))
	if err != nil {
		t.Fatal(err)
	}
	h := "rules: paired-v2\nhypotheses:\n  - {id: A, claim: c, source: s, metric: %s, cell: {strategy: C2, scenario: as-probed, cpu: cpus-1}, op: \">\", threshold: 0}\n"
	for metric, ok := range map[string]bool{"stock_refused": true, "peak_in_flight_orders": true, "stok_refused": false, "peak_in_flight_enrichment": false} {
		_, err := design.LoadHypotheses(exptest.WriteFile(t, dir, "h.yaml", fmt.Sprintf(h, metric)), spec)
		if (err == nil) != ok {
			t.Errorf("%s: %v, want accepted %v", metric, err, ok)
		}
	}
}
