package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/replay"
	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice/field"
)

// A load result's scenario (the endpoint's description and the schedule)
// has the admission scenario's JSON, key for key and value for value, for
// either generator: what loadlab load --json printed when the result held
// the model's scenario itself.
func TestScenarioKeepsTheModelsJSON(t *testing.T) {
	for _, change := range []func(*models.AdmissionScenario){
		func(*models.AdmissionScenario) {},
		func(s *models.AdmissionScenario) {
			s.Generator, s.Users, s.Think, s.Queue, s.Workers = models.GeneratorClosed, 3, 0, 0, 1
		},
	} {
		sc := models.DefaultAdmissionScenario()
		change(&sc)
		want, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(loadgen.Scenario{Endpoint: Endpoint(sc), Schedule: Schedule(sc)})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("load result's scenario\n%s\nthe model's\n%s", got, want)
		}
		var back loadgen.Scenario
		if err := json.Unmarshal(want, &back); err != nil || back.Schedule != Schedule(sc) || back.Endpoint != Endpoint(sc) {
			t.Errorf("the model's JSON read as a load result's scenario: %+v (%v)", back, err)
		}
	}
	if Schedule(models.AdmissionScenario{Generator: "poisson"}).Mode != "poisson" {
		t.Error("an unknown generator is not passed on for the schedule's validation to name")
	}
}

// The in-process endpoints are the scenarios' shapes.
func TestEndpoints(t *testing.T) {
	sc := models.DefaultAdmissionScenario()
	a := AdmissionEndpoint(sc, 0.1, 0.1)
	if a.Enrichment.Workers != 8 || a.Enrichment.Queue != 20 || a.Enrichment.RejectStatus != 429 || a.TimeScale != 0.1 ||
		a.Enrichment.TieWindow.Milliseconds() != 10 {
		t.Errorf("admission endpoint %+v", a.Enrichment)
	}
	cs := models.DefaultConcurrencyScenario()
	cs.Requests = 200_000
	r := ReplayEndpoint(cs, 0.5)
	if !r.Replay || r.Enrichment.Workers != 8 || r.Enrichment.Queue != -1 || !r.Enrichment.PreciseTimers ||
		r.RequestLogCap != 200_000 || r.TimeScale != 0.5 || r.Listen != "127.0.0.1:0" {
		t.Errorf("replay endpoint %+v, log cap %d", r.Enrichment, r.RequestLogCap)
	}
}

// A load's options name the bad field: the scenario's by the model's
// names, the generator's by loadgen's; ModelField turns a model's error
// into a field.Error and leaves others alone.
func TestAdmissionLoadNamesTheField(t *testing.T) {
	good := AdmissionLoad{Scenario: models.DefaultAdmissionScenario(),
		Config: loadgen.Config{Target: "http://127.0.0.1:1/enrich", Arrivals: loadgen.ArrivalsStep, TimeScale: 1}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		change func(*AdmissionLoad)
		field  string
	}{
		{func(a *AdmissionLoad) { a.Scenario.ServiceTime = 0 }, "service_time_s"},
		{func(a *AdmissionLoad) { a.Scenario.RampEnd = 1 }, "ramp_end_s"},
		{func(a *AdmissionLoad) { a.Scenario.Duration = loadgen.MaxDuration + 1 }, "duration_s"},
		{func(a *AdmissionLoad) { a.Config.MaxInFlight = -1 }, "max_in_flight"},
		{func(a *AdmissionLoad) { a.Config.Arrivals = "poisson" }, "arrivals"},
	} {
		a := good
		c.change(&a)
		if fe, ok := field.Of(a.Validate()); !ok || fe.Field != c.field {
			t.Errorf("got %v, want an error of the field %s", a.Validate(), c.field)
		}
	}
	plain := errors.New("plain")
	if ModelField(plain) != plain || ModelField(nil) != nil {
		t.Error("ModelField changed an error that is no model's")
	}
	g := good.Generator()
	if g.Schedule != Schedule(good.Scenario) || g.Endpoint != Endpoint(good.Scenario) || g.Target != good.Config.Target {
		t.Errorf("generator config %+v", g)
	}
}

// The result's JSON is the real run's, with "model" only when the model
// was run.
func TestAdmissionResultJSON(t *testing.T) {
	m, err := models.SimulateAdmission(models.DefaultAdmissionScenario())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		model *models.AdmissionResult
		want  bool
	}{{nil, false}, {&m, true}} {
		b, err := json.Marshal(AdmissionResult{Result: loadgen.Result{Requests: 3}, Model: c.model})
		if err != nil {
			t.Fatal(err)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(b, &keys); err != nil {
			t.Fatal(err)
		}
		_, has := keys["model"]
		if has != c.want || string(keys["requests"]) != "3" || keys["scheduled"] == nil {
			t.Errorf("model %v: keys %v", c.want, keys)
		}
	}
}

// Side by side: each outcome's difference in requests and as a share of
// the model's requests; the real run's own outcomes only when they occur.
func TestWriteAdmissionSideBySide(t *testing.T) {
	p95m, p95r := 8, 8.5
	model := models.AdmissionResult{Requests: 300, OnTime: 196, Rejected: 100, Unfinished: 4, PeakQueue: 20, P95LatencyS: &p95m}
	real := loadgen.Result{Requests: 297, OnTime: 190, Rejected: 103, Unfinished: 2, TransportErrors: 2, PeakQueue: 20,
		WastedWorkerS: 1.5, P95LatencyS: &p95r}
	var b bytes.Buffer
	if err := WriteAdmissionSideBySide(&b, model, real); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"real − model", "-6", "-2.0%", "+3", "+1.0%", "transport_error (not in the model)",
		"wasted_worker_s", "+1.5", "p95_latency_s", "8.50", "+0.50"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "cancelled") {
		t.Errorf("an outcome that did not occur is listed:\n%s", out)
	}
}

// A limit's comparison counts the workloads that differ, those beyond
// their near-ties, and the largest relative differences of the times.
func TestCompareStrategy(t *testing.T) {
	model := []models.ConcurrencyMetrics{
		{Completed: 48, ClientOutcomeMs: 1000, ServerDrainMs: 1000},
		{Completed: 46, TimedOut: 2, ClientOutcomeMs: 1500, ServerDrainMs: 2000},
		{Completed: 48, ClientOutcomeMs: 1200, ServerDrainMs: 1200},
	}
	real := []replay.Trial{
		{Seed: 1, Metrics: replay.Metrics{Completed: 48, ClientOutcomeMs: 1010, ServerDrainMs: 1000}},
		{Seed: 2, Metrics: replay.Metrics{Completed: 47, TimedOut: 1, ClientOutcomeMs: 1500, ServerDrainMs: 2100}, NearTies: 1},
		{Seed: 3, Metrics: replay.Metrics{Completed: 46, TimedOut: 2, ClientOutcomeMs: 1200, ServerDrainMs: 1200}},
	}
	s := CompareStrategy("bounded:4", 4, model, real)
	if s.DifferCompleted != 2 || s.DifferTimedOut != 2 || s.DifferWithoutTie != 1 || s.NearTies != 1 {
		t.Errorf("differing %d completed, %d timed out, %d without a tie; %d near-ties; want 2, 2, 1, 1",
			s.DifferCompleted, s.DifferTimedOut, s.DifferWithoutTie, s.NearTies)
	}
	if s.MaxRelClientOutcome != 0.01 || s.MaxRelServerDrain != 0.05 {
		t.Errorf("largest differences %v, %v; want 0.01 and 0.05", s.MaxRelClientOutcome, s.MaxRelServerDrain)
	}
	if s.Model.Median.Completed != 48 || s.Real.Median.Completed != 47 || s.Real.Min.Completed != 46 || s.Real.Max.ServerDrainMs != 2100 {
		t.Errorf("statistics: model %+v, real %+v", s.Model, s.Real)
	}
	var b bytes.Buffer
	if err := WriteConcurrencyResult(&b, ConcurrencyResult{Strategies: []Strategy{s}, TimeScale: 0.2, Workloads: 3}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3 workloads, time scale 0.2", "bounded:4 (limit 4)", "completed", "47 (46–48)",
		"2 in completed, 2 in timed_out (1 of them by more than their near-ties)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

// A replay's bounds are named by field.
func TestConcurrencyReplayBounds(t *testing.T) {
	good := ConcurrencyReplay{Scenario: models.DefaultConcurrencyScenario(), TimeScale: 1}
	good.Scenario.SeedTo = 10
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		change func(*ConcurrencyReplay)
		field  string
	}{
		{func(r *ConcurrencyReplay) { r.TimeScale = 0.001 }, "time_scale"},
		{func(r *ConcurrencyReplay) { r.TimeScale = 0 }, "time_scale"},
		{func(r *ConcurrencyReplay) { r.Scenario.SeedTo = 5000 }, "seed_to"},
		{func(r *ConcurrencyReplay) { r.Scenario.Limits = nil }, "limits"},
	} {
		r := good
		c.change(&r)
		if fe, ok := field.Of(r.Validate()); !ok || fe.Field != c.field {
			t.Errorf("got %v, want an error of the field %s", r.Validate(), c.field)
		}
	}
}
