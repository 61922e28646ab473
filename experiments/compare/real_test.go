package compare_test

import (
	"context"
	"math"
	"testing"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/replay"
	"github.com/loadlab/loadlab/experiments/compare"
	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// loadBesideTheModel runs scenario sc for real at time scale scale, step
// arrivals, against its in-process endpoint (as loadlab load does without
// --target), with the model beside it.
func loadBesideTheModel(t *testing.T, sc models.AdmissionScenario, scale float64, cfg loadgen.Config) (loadgen.Result, models.AdmissionResult) {
	t.Helper()
	m := mocktest.Start(t, mocktest.Options{Config: compare.AdmissionEndpoint(sc, scale, cfg.TieWindow)})
	cfg.Target, cfg.Arrivals, cfg.TimeScale = m.URL+"/enrich", loadgen.ArrivalsStep, scale
	res, err := compare.RunAdmissionLoad(context.Background(), compare.AdmissionLoad{Scenario: sc, Config: cfg, Model: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model == nil || res.Scenario.Schedule != compare.Schedule(sc) || res.Scenario.Endpoint != compare.Endpoint(sc) {
		t.Fatalf("model %v, the result's scenario %+v", res.Model, res.Scenario)
	}
	return res.Result, *res.Model
}

// Real time at scale 0.1 (6 s each, one after the other: side by side,
// beside another package's tests, the queue of 50 read 87 on time to the
// model's 96): the real run agrees with the model within 2% of all
// requests for every outcome.
func TestLoadAgreesWithTheModel(t *testing.T) {
	tests := []struct {
		name   string
		change func(*models.AdmissionScenario)
	}{
		{"opening run", func(*models.AdmissionScenario) {}},
		{"queue 50", func(s *models.AdmissionScenario) { s.Queue = 50 }},
		{"closed, 16 users", func(s *models.AdmissionScenario) { s.Generator = models.GeneratorClosed; s.Users = 16 }},
	}
	// The late threshold is three times the default: 30 ms at this time scale,
	// within the model's step (100 ms), where the model's outcomes do not
	// depend on when in the step an arrival comes. At the default 10 ms,
	// the pacer's 1 ms timers, waking 3–18 ms late under -race beside the
	// in-process endpoint, left arrivals behind in most attempts.
	const lateThreshold = 3 * loadgen.DefaultLateThreshold
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := models.DefaultAdmissionScenario()
			tt.change(&sc)
			// A generator that fell behind its schedule by more than 1% of
			// it (the machine stalled it: under -race on a VM whose host
			// steals its CPU, 27 of 300 once) sent other load than the
			// model's, so its outcomes cannot be compared within 2%:
			// measure again, up to three times, and fail when no attempt
			// kept up.
			var real loadgen.Result
			var model models.AdmissionResult
			for attempt := 1; ; attempt++ {
				real, model = loadBesideTheModel(t, sc, 0.1, loadgen.Config{LateThreshold: lateThreshold,
					TieWindow: loadgen.DefaultTieWindowStep})
				if 100*real.Behind <= real.Scheduled {
					break
				}
				t.Logf("attempt %d: the generator fell behind its schedule by %d of %d arrivals", attempt, real.Behind, real.Scheduled)
				if attempt == 3 {
					t.Fatalf("the generator fell behind its schedule in %d attempts: the machine is too busy to compare it with the model", attempt)
				}
			}
			if !real.ServerJoined || real.Dropped != 0 {
				t.Fatalf("joined %v, dropped %d", real.ServerJoined, real.Dropped)
			}
			if sum := real.OnTime + real.Rejected + real.TooLate + real.Unfinished; sum != real.Requests {
				t.Errorf("outcomes add up to %d, not %d", sum, real.Requests)
			}
			tol := 0.02 * float64(model.Requests)
			for _, c := range []struct {
				name        string
				real, model int
			}{
				{"requests", real.Requests, model.Requests},
				{"on_time", real.OnTime, model.OnTime},
				{"rejected", real.Rejected, model.Rejected},
				{"too_late", real.TooLate, model.TooLate},
				{"unfinished", real.Unfinished, model.Unfinished},
			} {
				if math.Abs(float64(c.real-c.model)) > tol {
					t.Errorf("%s: real %d, model %d: more than 2%% of %d requests apart", c.name, c.real, c.model, model.Requests)
				}
			}
			t.Logf("real %+v", real)
			t.Logf("model %+v", model)
		})
	}
}

// A closed user whose request is rejected waits at least one model
// second: with a think time of 0 it does not spin. The real run agrees
// with the model, which follows the same rule (over 60 s at think 0: 71
// requests, 11 on time, 59 rejected), within one request.
//
// Every event of this scenario falls on a whole model second (service 5,
// think 0 or 1, rejections at once), so the tie window can be 0.4 model s
// without joining two steps: a completion and an arrival of one step are
// ordered as in the model when the machine stalls the process for up to
// 40 ms real at time scale 0.1. At 0.05 with the default window (5 ms
// real), a VM whose host took its CPU put a rejected user's arrival
// before the completion it tied with (32 requests, 26 rejected, to the
// model's 30 and 24); so did stopping the test binary for 40 ms every
// 300 ms, which this window and scale pass.
func TestThinkZeroAgreesWithTheModel(t *testing.T) {
	t.Parallel() // two users: light beside TestLoadAgreesWithTheModel
	for _, think := range []int{0, 1} {
		sc := models.DefaultAdmissionScenario()
		sc.Generator, sc.Users, sc.Workers, sc.Queue, sc.ServiceTime, sc.Think = models.GeneratorClosed, 2, 1, 0, 5, think
		sc.Duration = 30
		res, model := loadBesideTheModel(t, sc, 0.1, loadgen.Config{TieWindow: 0.4})
		// One request of slack: at the run's edges a real second is not a
		// model step.
		for _, c := range [][2]int{{res.Requests, model.Requests}, {res.OnTime, model.OnTime}, {res.Rejected, model.Rejected}} {
			if d := c[0] - c[1]; d < -1 || d > 1 {
				t.Errorf("think %d: real %d requests (%d on time, %d rejected), model %d (%d, %d)", think,
					res.Requests, res.OnTime, res.Rejected, model.Requests, model.OnTime, model.Rejected)
				break
			}
		}
	}
}

// One published workload at the server's worker count and unbounded, over
// real HTTP against the mock service in replay mode, under the race
// detector: every request is accounted for by the client and found in the
// server's log (Run fails otherwise), at most the limit is in flight, as
// in the model, and bounded to the workers nothing queues and everything
// completes, in both. The timing-dependent figures (who times out, the
// peak queue when 48 go at once) are compared by the CLI test, built
// without the race detector: cmd/loadlab TestSimulateRealAgreesWithTheModel.
func TestReplayAgreesWithTheModelUnderRace(t *testing.T) {
	const scale = 0.1
	sc := models.DefaultConcurrencyScenario()
	cfg := config.Default()
	cfg.TimeScale, cfg.Replay = scale, true
	cfg.Enrichment = config.Station{Workers: sc.Workers, Queue: config.UnboundedQueue, RejectStatus: 503}
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	dist, err := sc.Durations.Build()
	if err != nil {
		t.Fatal(err)
	}
	w := models.Workload(dist, sc.Requests, 1)
	for _, limit := range []int{8, 48} {
		model := models.SimulateTrial(w, sc.Workers, limit, sc.Timeout)
		tr, err := replay.Run(context.Background(), replay.Config{Target: m.URL, Limit: limit, Timeout: sc.Timeout, TimeScale: scale},
			replay.Workload{Seed: 1, Durations: w})
		if err != nil {
			t.Fatal(err)
		}
		got := tr.Metrics
		if got.Completed+got.TimedOut != 48 || got.PeakInFlight != model.PeakInFlight {
			t.Errorf("limit %d: %+v; model %+v", limit, got, model)
		}
		if limit == 8 && (got.Completed != 48 || got.PeakQueue != 0 || model.Completed != 48 || model.PeakQueue != 0) {
			t.Errorf("limit 8: %+v; model %+v; want all 48 completed, none queued", got, model)
		}
	}
}

// The replay of a scenario's workloads against its replay endpoint sets
// every limit beside the model, workload for workload.
func TestRunConcurrencyReplay(t *testing.T) {
	t.Parallel() // two small workloads
	sc := models.DefaultConcurrencyScenario()
	sc.SeedFrom, sc.SeedTo, sc.Limits, sc.Requests = 1, 2, []int{1, 8}, 8
	m := mocktest.Start(t, mocktest.Options{Config: compare.ReplayEndpoint(sc, 0.1)})
	res, err := compare.RunConcurrencyReplay(context.Background(), compare.ConcurrencyReplay{Scenario: sc, Target: m.URL, TimeScale: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Workloads != 2 || res.TimeScale != 0.1 || len(res.Strategies) != 2 {
		t.Fatalf("%d workloads, time scale %g, %d strategies", res.Workloads, res.TimeScale, len(res.Strategies))
	}
	for i, s := range res.Strategies {
		if s.Name != []string{"sequential", "unbounded"}[i] || len(s.Trials) != 2 || len(s.ModelTrials) != 2 ||
			s.Trials[1].Seed != 2 || s.Real.Max.PeakInFlight != s.Model.Max.PeakInFlight {
			t.Errorf("limit %d: %s, %d trials, %d model trials, peak in flight %v (model %v)", s.Limit, s.Name, len(s.Trials),
				len(s.ModelTrials), s.Real.Max.PeakInFlight, s.Model.Max.PeakInFlight)
		}
	}
}
