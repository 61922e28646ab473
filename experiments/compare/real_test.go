package compare_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/replay"
	"github.com/loadlab/loadlab/experiments/compare"
	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// loadBesideTheModel runs scenario sc, step arrivals, against its
// in-process endpoint (as loadlab load does without --target), with the
// model beside it: the real generator (its net/http client) and the real
// endpoint on a synctest fake clock over the in-memory network, so that a
// stall of the machine neither puts the generator behind its schedule nor
// reorders a completion and an arrival that tie. Call it in a bubble.
func loadBesideTheModel(t *testing.T, sc models.AdmissionScenario, cfg loadgen.Config) (loadgen.Result, models.AdmissionResult) {
	t.Helper()
	const scale = 1
	m := mocktest.Start(t, mocktest.Options{Config: compare.AdmissionEndpoint(sc, scale, cfg.TieWindow), InMemory: true})
	cfg.Target, cfg.Arrivals, cfg.TimeScale = m.URL+"/enrich", loadgen.ArrivalsStep, scale
	cfg.Client, cfg.Dial = loadgen.ClientNetHTTP, m.Dial
	cfg.CPU = func() (time.Duration, bool) { return 0, true } // the fake clock's: no CPU time passes
	res, err := compare.RunAdmissionLoad(context.Background(), compare.AdmissionLoad{Scenario: sc, Config: cfg, Model: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model == nil || res.Scenario.Schedule != compare.Schedule(sc) || res.Scenario.Endpoint != compare.Endpoint(sc) {
		t.Fatalf("model %v, the result's scenario %+v", res.Model, res.Scenario)
	}
	return res.Result, *res.Model
}

// The real run agrees with the model within 2% of all requests for every
// outcome.
func TestLoadAgreesWithTheModel(t *testing.T) {
	tests := []struct {
		name   string
		change func(*models.AdmissionScenario)
	}{
		{"opening run", func(*models.AdmissionScenario) {}},
		{"queue 50", func(s *models.AdmissionScenario) { s.Queue = 50 }},
		{"closed, 16 users", func(s *models.AdmissionScenario) { s.Generator = models.GeneratorClosed; s.Users = 16 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				sc := models.DefaultAdmissionScenario()
				tt.change(&sc)
				real, model := loadBesideTheModel(t, sc, loadgen.Config{TieWindow: loadgen.DefaultTieWindowStep})
				if real.Behind != 0 {
					t.Fatalf("the generator fell behind its schedule by %d of %d arrivals on a fake clock", real.Behind, real.Scheduled)
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
		})
	}
}

// A closed user whose request is rejected waits at least one model
// second: with a think time of 0 it does not spin. The real run agrees
// with the model, which follows the same rule (over 60 s at think 0: 71
// requests, 11 on time, 59 rejected), within one request.
//
// Every event of this scenario falls on a whole model second (service 5,
// think 0 or 1, rejections at once): a completion and an arrival of one
// step tie, and the tie window (0.4 model s) orders them as the model does.
func TestThinkZeroAgreesWithTheModel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testThinkZero)
}

func testThinkZero(t *testing.T) {
	for _, think := range []int{0, 1} {
		sc := models.DefaultAdmissionScenario()
		sc.Generator, sc.Users, sc.Workers, sc.Queue, sc.ServiceTime, sc.Think = models.GeneratorClosed, 2, 1, 0, 5, think
		sc.Duration = 30
		res, model := loadBesideTheModel(t, sc, loadgen.Config{TieWindow: 0.4})
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
// peak queue when 48 go at once, the durations) are compared on a fake
// clock: TestReplayAgreesWithTheModelOnAFakeClock.
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

// On a fake clock over the in-memory wire the replay of the concurrency
// scenario's workloads is the model's, workload for workload and limit
// for limit: the same completions and timeouts (but for ties of a
// completion and a deadline, counted as near-ties), the same peaks, and
// with no tie every figure the model's, to the millisecond: no stall of
// this machine can move an event on this clock.
func TestReplayAgreesWithTheModelOnAFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := models.DefaultConcurrencyScenario()
		sc.SeedFrom, sc.SeedTo = 1, 3
		cfg := compare.ReplayEndpoint(sc, 1)
		// Precise timers sleep their last slice in the kernel, in real
		// time: on the fake clock the runtime's timers are exact.
		cfg.Enrichment.PreciseTimers = false
		m := mocktest.Start(t, mocktest.Options{Config: cfg, InMemory: true})
		res, err := compare.RunConcurrencyReplay(context.Background(), compare.ConcurrencyReplay{Scenario: sc, Target: m.URL, TimeScale: 1, Dial: m.Dial})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Strategies) != len(sc.Limits) {
			t.Fatalf("%d strategies, want one per limit %v", len(res.Strategies), sc.Limits)
		}
		for _, s := range res.Strategies {
			for i, tr := range s.Trials {
				got, want := tr.Metrics, s.ModelTrials[i]
				ties := float64(tr.NearTies)
				if math.Abs(got.Completed-want.Completed) > ties || math.Abs(got.TimedOut-want.TimedOut) > ties ||
					got.PeakInFlight != want.PeakInFlight || got.PeakQueue != want.PeakQueue {
					t.Errorf("%s, workload %d: %+v; model %+v; %d near-ties", s.Name, tr.Seed, got, want, tr.NearTies)
				}
				if tr.NearTies == 0 && models.ConcurrencyMetrics(got) != want {
					t.Errorf("%s, workload %d: %+v; model %+v: with no tie, every figure is the model's", s.Name, tr.Seed, got, want)
				}
			}
			t.Logf("%s: real %+v; model %+v", s.Name, s.Real.Median, s.Model.Median)
		}
	})
}
