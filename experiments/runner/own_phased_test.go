package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/report"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// ownPhasedSpec is a phased scenario of OwnSpec's copies: 3 lab seconds
// as probed, then orders falls to a third of its workers (1 of 3) and no
// queue, and every answer of stock is lost (a reset downstream), until
// the run's end; its one strategy given inline (3 write permits).
const ownPhasedSpec = `name: own-phased
pipeline: shop.yaml
virtual:
  stock: {probe: stock.json}
  orders: {probe: orders.json}
records: 100000
duration: 6s
runs: 3
time_scale: 0.5
call_timeout: 200s
permit_timeout: 100s
seed: 1
strategies:
  - {name: mine, records_in_flight: 10, permits: {orders: 3}}
scenarios: [orders-drop]
cpus:
  - {name: cpus-1, cpus: 1}
phased:
  orders-drop:
    phases:
      - {name: before, duration: 3s}
      - name: drop
        duration: 3s
        set: {orders: {workers: 0.34, queue: 0}}
        faults: [{dependency: stock, kind: reset, direction: downstream}]
`

// A phased scenario of one's own copies: each run's copies start as
// probed, the runner gives the orders copy its drop-phase settings live
// and puts the fault in front of the stock copy at the phase's start,
// and every run is still reconciled with the copies' counts (the calls
// lost to the fault were served by the copy, and counted by both).
func TestOwnPhasedScenarioChangesTheCopies(t *testing.T) {
	t.Parallel() // it checks counts and settings, not speed
	bin := exptest.BuildLoadlab(t)
	dir := exptest.OwnServices(t, t.TempDir())
	spec, err := design.LoadSpec(exptest.WriteFile(t, dir, "own.yaml", ownPhasedSpec))
	if err != nil {
		t.Fatal(err)
	}
	r := mustNew(t, Config{Spec: spec, Binary: bin, Copies: startCopies{t}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 {
		t.Fatalf("%d runs, want 3", len(res.Runs))
	}
	for _, run := range res.Runs {
		if !run.Valid() || !run.Faulted {
			t.Fatalf("run %d: %s: %s (faulted %v)", run.Run, run.Status, run.Reason, run.Faulted)
		}
		rc := run.Reconciliation
		if len(rc.Differences) != 0 || rc.Server.Requests["stock"] != rc.Client.CallsSent["stock"] || rc.Client.CallsSent["stock"] == 0 {
			t.Errorf("run %d: reconciliation %+v", run.Run, rc)
		}
		evs := run.PhaseEvents
		if len(evs) != 2 || evs[0].Action != resultsfile.ActionSet || evs[1].Action != resultsfile.ActionFaults || evs[0].Err != "" || evs[1].Err != "" || evs[0].Scheduled != 3 {
			t.Errorf("run %d: phase events %+v, want the set and the faults at 3 lab s, without error", run.Run, evs)
		}
		// Read once quiet after the run: the drop's settings are in force.
		if o := run.Server.Stations["orders"]; o.Workers != 1 || o.QueueCapacity != 0 {
			t.Errorf("run %d: the orders copy ends with %d workers and %d queue slots, want the drop's 1 and 0", run.Run, o.Workers, o.QueueCapacity)
		}
		c := run.Client
		if len(c.Phases) < 2 || c.Phases[0].Name != "before" || c.Phases[1].Name != "drop" {
			t.Fatalf("run %d: phases %+v", run.Run, c.Phases)
		}
		// 3 write permits against 3 workers and 3 queue slots: no refusal
		// in the first two lab seconds. (The child's clock may start up
		// to 0.5 lab s after the agreed start, so the phase it counts an
		// answer in may trail the runner's change by as much.) The only
		// errors are the fault's.
		early := 0
		for _, sec := range c.PerSecond {
			if sec.T < 2 {
				early += sec.WriteRejections
			}
		}
		if early != 0 || c.Calls["stock"][budgets.Error] == 0 || c.Calls["orders"][budgets.Error] != 0 {
			t.Errorf("run %d: %d write refusals in the first 2 lab s; calls %v", run.Run, early, c.Calls)
		}
		t.Logf("run %d: write refusals by phase %d, %d; stock calls %v", run.Run, c.Phases[0].WriteRejections, c.Phases[1].WriteRejections, c.Calls["stock"])
	}
	if _, err := judge.Check(res, res.Experiment.MockConfig()); err != nil {
		t.Errorf("check: %v", err)
	}
	out := t.TempDir()
	if err := report.WriteOutputs(out, res); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"orders-drop: phased, the copies changed during each run", "6 lab s from the copies as-probed, in 2 phases", "**drop** (3–6 lab s)",
		"orders workers 3 → 1 (×0.34), queue slots 3 → 0 (×0)", "faults: reset on stock", "| phase | lab s | accepted/s (lab) | write refusals |", "changes the virtual copies during each run", "mine — given inline: 10 records in flight; orders 3 permits"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}

// What a phased scenario of copies cannot do is refused, naming the
// field: a restart, a fault on a dependency without a copy or losing the
// write's answers, a change the copy's probe did not see, a profile.
func TestOwnPhasedScenarioMistakes(t *testing.T) {
	dir := exptest.OwnServices(t, t.TempDir())
	for _, c := range []struct{ from, to, want string }{
		{"faults: [{dependency: stock, kind: reset, direction: downstream}]", "restart: {after: 1s, signal: KILL}", "restart: a virtual copy has no process of its own to restart"},
		{"dependency: stock, kind: reset", "dependency: stok, kind: reset", `"stok" has no virtual copy (faults go through a proxy in front of a copy: orders, stock); did you mean "stock"?`},
		{"dependency: stock, kind: reset", "dependency: orders, kind: reset", "a reset of the write orders loses answers"},
		{"direction: downstream", "direction: upstream", "use downstream"},
		{"queue: 0}", "queue: 0, rate: 2}", "the copy of orders has no rate limit"},
		{"{orders: {workers: 0.34", "{order: {workers: 0.34", "no virtual copy order"},
		{"{workers: 0.34, queue: 0}", "{worker: 0.34}", "worker: unknown change; did you mean \"workers\"?"},
		{"  orders-drop:\n", "  orders-drop:\n    profile: healthy\n", "starts with every copy as-probed"},
		{"duration: 3s\n        set", "duration: 2s\n        set", "the phases add up to 5s, not the experiment's duration of 6s"},
		{"scenarios: [orders-drop]", "scenarios: [write-capacity-drop]", "or one of the file's phased scenarios (orders-drop)"},
	} {
		text := strings.Replace(ownPhasedSpec, c.from, c.to, 1)
		if text == ownPhasedSpec {
			t.Fatalf("%q is not in the spec", c.from)
		}
		_, err := design.LoadSpec(exptest.WriteFile(t, dir, "own.yaml", text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.to, err, c.want)
		}
	}
}
