package design_test

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
)

// inlineSpec is OwnSpec with a strategy given inline beside the file's.
var inlineSpec = strings.Replace(exptest.OwnSpec, "strategies: [C2, advised, mine]",
	"strategies:\n  - C2\n  - mine\n  - name: tight\n    records_in_flight: 6\n    permits: {orders: 2}\n    rates: {stock: 40}", 1)

// A strategy given inline in the experiment file runs by its name, as a
// strategy file's does, checked against the pipeline as strictly.
func TestInlineStrategies(t *testing.T) {
	dir := exptest.OwnServices(t, t.TempDir())
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "own.yaml", inlineSpec))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(spec.Strategies, ","); got != "C2,mine,tight" {
		t.Errorf("strategies %s", got)
	}
	st, ok := spec.Strategy(design.Cell{Strategy: "tight"}, nil)
	if !ok || st.Name != "tight" || st.RecordsInFlight != 6 || st.Permits["orders"] != 2 || st.Rates["stock"] != 40 {
		t.Errorf("tight: %+v (%v)", st, ok)
	}
	if mine, ok := spec.Strategy(design.Cell{Strategy: "mine"}, nil); !ok || mine.Permits["orders"] != 3 {
		t.Errorf("mine: %+v (%v)", mine, ok)
	}
	for _, c := range []struct{ from, to, want string }{
		{"permits: {orders: 2}", "permits: {order: 2}", `own.yaml:18: strategies[2].permits.order: "order" is not a dependency of pipeline shop`},
		{"permits: {orders: 2}", "permits: {orders: 0}", "strategies[2].permits.orders: 0 must be ≥ 1"},
		{"permits: {orders: 2}", "permit: {orders: 2}", `strategies[2]: `},
		{"records_in_flight: 6", "records_in_flight: 0", "strategies[2].records_in_flight: 0 must be ≥ 1"},
		{"name: tight", "name: mine", `strategies[2].name: "mine" is also a strategy file's name in strategy_files`},
		{"  - name: tight\n", "  - records_in_flight: 1\n", "strategies[2]: a strategy given inline needs a name"},
	} {
		text := strings.Replace(inlineSpec, c.from, c.to, 1)
		if text == inlineSpec {
			t.Fatalf("%q is not in the spec", c.from)
		}
		_, err := design.LoadSpec(exptest.WriteFile(t, dir, "own.yaml", text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %q", c.to, err, c.want)
		}
	}
	// The lab's experiments take the lab's strategies.
	lab := strings.Replace(exptest.TinySpec, "strategies: [", "strategies: [{name: tight, records_in_flight: 2}, ", 1)
	if lab == exptest.TinySpec {
		t.Fatal("no strategies list in TinySpec")
	}
	if _, err := design.LoadSpec(exptest.WriteFile(t, dir, "lab.yaml", lab)); err == nil || !strings.Contains(err.Error(), "strategies[0]: a strategy given inline runs on one's own pipeline") {
		t.Errorf("inline on the lab's pipeline: %v", err)
	}
}
