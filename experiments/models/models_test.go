package models

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/latency"
	"github.com/loadlab/loadlab/mockservice/testkit"
)

// The figures published in concurrency-simulation.txt (medians over seeds
// 1–100). Times are printed there rounded to whole milliseconds.
func TestConcurrencyReproducesThePublishedTable(t *testing.T) {
	rep, err := SimulateConcurrency(DefaultConcurrencyScenario())
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name                           string
		completed, timedOut            float64
		clientOutcomeMs, serverDrainMs float64
		peakInFlight, peakQueue        float64
		p95WaitMs                      float64
	}
	want := []row{
		{"sequential", 48, 0, 11518, 11518, 1, 0, 0},
		{"bounded:4", 48, 0, 3121, 3121, 4, 0, 0},
		{"bounded:8", 48, 0, 1834, 1834, 8, 0, 0},
		{"unbounded", 46, 2, 1500, 1834, 48, 40, 1188},
	}
	if len(rep.Strategies) != len(want) {
		t.Fatalf("%d strategies, want %d", len(rep.Strategies), len(want))
	}
	for i, w := range want {
		got := rep.Strategies[i]
		m := got.Median
		g := row{got.Name, m.Completed, m.TimedOut, math.Round(m.ClientOutcomeMs), math.Round(m.ServerDrainMs),
			m.PeakInFlight, m.PeakQueue, math.Round(m.P95QueueWaitMs)}
		if g != w {
			t.Errorf("median row\n got %+v\nwant %+v", g, w)
		}
	}
	// "a median 510 milliseconds of server work performed after client timeouts"
	if got := rep.Strategies[3].Median.WorkAfterTimeoutMs; got != 510 {
		t.Errorf("unbounded work after timeout %v ms, want 510", got)
	}
}

func TestConcurrencyEventOrder(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name      string
		durations []time.Duration
		workers   int
		limit     int
		want      ConcurrencyMetrics
	}{
		{
			// Completion exactly at the timeout is a success.
			name: "completion at the timeout succeeds", durations: []time.Duration{1500 * ms}, workers: 1, limit: 1,
			want: ConcurrencyMetrics{Completed: 1, ClientOutcomeMs: 1500, ServerDrainMs: 1500, PeakInFlight: 1},
		},
		{
			name: "one millisecond late times out and keeps working", durations: []time.Duration{1501 * ms}, workers: 1, limit: 1,
			want: ConcurrencyMetrics{TimedOut: 1, ClientOutcomeMs: 1500, ServerDrainMs: 1501, PeakInFlight: 1, WorkAfterTimeoutMs: 1},
		},
		{
			// B waits 1000 ms for A, then serves 1000 ms: 500 ms after its deadline.
			name: "queued work after the deadline", durations: []time.Duration{1000 * ms, 1000 * ms}, workers: 1, limit: 2,
			want: ConcurrencyMetrics{Completed: 1, TimedOut: 1, ClientOutcomeMs: 1500, ServerDrainMs: 2000, PeakInFlight: 2,
				PeakQueue: 1, P95QueueWaitMs: 1000, MaxQueueWaitMs: 1000, WorkAfterTimeoutMs: 500},
		},
		{
			// With limit 1 a timed-out request frees the client slot: the
			// next one queues behind the still-running work.
			name: "slot freed by a timeout", durations: []time.Duration{2000 * ms, 100 * ms}, workers: 1, limit: 1,
			want: ConcurrencyMetrics{Completed: 1, TimedOut: 1, ClientOutcomeMs: 2100, ServerDrainMs: 2100, PeakInFlight: 1,
				PeakQueue: 1, P95QueueWaitMs: 500, MaxQueueWaitMs: 500, WorkAfterTimeoutMs: 500},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SimulateTrial(tt.durations, tt.workers, tt.limit, DefaultConcurrencyTimeout)
			if got != tt.want {
				t.Errorf("\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestWorkloadIsTheSeededMixture(t *testing.T) {
	d, _ := latency.ConcurrencySimulation().Build()
	a, b := Workload(d, 48, 1), Workload(d, 48, 1)
	if !slices.Equal(a, b) {
		t.Error("same seed, different workloads")
	}
	if slices.Equal(a, Workload(d, 48, 2)) {
		t.Error("seeds 1 and 2 gave the same workload")
	}
}

func TestMedianAndNearestRank(t *testing.T) {
	if got := Median([]float64{1, 2, 3, 10}); got != 2.5 {
		t.Errorf("median of an even count %v, want 2.5", got)
	}
	if got := Median([]float64{1, 2, 30}); got != 2 {
		t.Errorf("median of an odd count %v, want 2", got)
	}
	xs := make([]int, 48)
	for i := range xs {
		xs[i] = i + 1
	}
	if got := NearestRank(xs, 0.95); got != 46 {
		t.Errorf("p95 of 1..48 %d, want 46 (rank ceil(45.6))", got)
	}
	if got := NearestRank([]int{7}, 0.95); got != 7 {
		t.Errorf("p95 of one value %d, want 7", got)
	}
}

// The figures published in admission-load-test.txt.
func TestAdmissionReproducesThePublishedRuns(t *testing.T) {
	intp := func(v int) *int { return &v }
	tests := []struct {
		name   string
		change func(*AdmissionScenario)
		check  func(t *testing.T, r AdmissionResult)
	}{
		{"opening run", func(*AdmissionScenario) {}, func(t *testing.T, r AdmissionResult) {
			if r.Requests != 300 || r.OnTime != 196 || r.Rejected != 100 || r.TooLate != 0 {
				t.Errorf("got %d requests, %d on time, %d rejected, %d too late; want 300, 196, 100, 0", r.Requests, r.OnTime, r.Rejected, r.TooLate)
			}
			if !eqp(r.P95LatencyS, intp(8)) || !eqp(r.QueueFullAtS, intp(15)) || !eqp(r.QueueEmptyAtS, intp(48)) {
				t.Errorf("p95 %v, full at %v, empty at %v; want 8, 15, 48", testkit.Value(r.P95LatencyS), testkit.Value(r.QueueFullAtS), testkit.Value(r.QueueEmptyAtS))
			}
		}},
		{"queue 50", func(s *AdmissionScenario) { s.Queue = 50 }, func(t *testing.T, r AdmissionResult) {
			if r.Rejected != 70 || r.TooLate != 116 || r.OnTime != 96 || r.WastedWorkerS != 232 {
				t.Errorf("got %d rejected, %d too late, %d on time, %d wasted; want 70, 116, 96, 232", r.Rejected, r.TooLate, r.OnTime, r.WastedWorkerS)
			}
		}},
		{"closed, 16 users", func(s *AdmissionScenario) { s.Generator = GeneratorClosed; s.Users = 16 }, func(t *testing.T, r AdmissionResult) {
			if r.OnTime != 231 || !eqp(r.P95LatencyS, intp(3)) {
				t.Errorf("got %d on time, p95 %v; want 231, 3", r.OnTime, testkit.Value(r.P95LatencyS))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultAdmissionScenario()
			tt.change(&s)
			r, err := SimulateAdmission(s)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, r)
			if r.OnTime+r.Rejected+r.TooLate+r.Unfinished != r.Requests {
				t.Errorf("outcomes do not add up: %+v", r)
			}
		})
	}
}

func TestAdmissionPhaseOrder(t *testing.T) {
	// One worker, 2 s service, no queue, timeout 2 s, one request per second.
	// t=0 starts A; t=1 B is rejected (worker busy, no queue); t=2 A completes
	// exactly at its timeout (completions come before give-ups: on time) and
	// C starts on the freed worker in the same second.
	s := AdmissionScenario{Workers: 1, ServiceTime: 2, Queue: 0, Timeout: 2, Generator: GeneratorOpen,
		BaseRate: 1, PeakRate: 1, Duration: 3}
	r, err := SimulateAdmission(s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 3 || r.OnTime != 1 || r.Rejected != 1 || r.Unfinished != 1 || r.QueueEmptyAtS != nil {
		t.Errorf("got %+v; want 3 requests: 1 on time, 1 rejected, 1 unfinished, queue never used", r)
	}
}

// A closed user waits Think seconds after a reply or a give-up and at least
// one second after a rejection. Worked out by hand from the phase order
// (completions, starts, give-ups, arrivals; users arrive in number order):
//
// 2 users, 1 worker, no queue, service 5 s, timeout 10 s, 60 s; user 0
// first sends at 0, user 1 at 1. Nothing queues, so nothing is given up.
//
// Think 0. t=0: u0 starts (0–5). t=1..4: u1 is rejected, sends again at
// t+max(0,1) = t+1. t=5: u0 completes on time (latency 5) and sends again
// at 5+0 = 5, in this second's arrival phase, before u1: u0 starts (5–10),
// u1 is rejected. So every 5 s: u0 holds the worker, u1 is rejected each
// second. u0 sends at 0, 5, …, 55: 12 requests, 11 on time (latency 5), the
// one at 55 still running at 60: unfinished. u1 sends at 1..59: 59
// rejected. 71 requests; 2 arrivals in seconds 5, 10, …, 55, 1 in the others.
//
// Think 1. t=0: u0 starts (0–5). t=1..4: u1 rejected, next at t+1. t=5: u0
// completes on time, next at 6; u1 arrives and starts (5–10). t=6..9: u0
// rejected. t=10: u1 completes, next at 11; u0 starts (10–15). The worker
// alternates: each block 5k..5k+4 (k = 0..11) is one start and 4
// rejections. 12 starts, 11 on time (latency 5), 1 unfinished (55–60), 48
// rejected: 60 requests, 1 arrival every second.
//
// Give-up at think 0. 1 user, 1 worker, no queue, service 2 s, timeout 1 s,
// 5 s. t=0: A starts (0–2). t=1: u0 gives up on A (waited 1 s) and sends
// again at 1+0 = 1, this second's arrival phase: rejected (A still holds the
// worker), next at 1+max(0,1) = 2. t=2: A completes too late (2 wasted
// worker-seconds); u0's B starts (2–4). t=3: gives up on B, resends at once,
// rejected. t=4: B too late; C starts (4–6), unfinished. 5 requests: 2 too
// late, 2 rejected, 1 unfinished, 4 wasted worker-seconds; 1 arrival every
// second.
func TestAdmissionClosedUserAfterARejection(t *testing.T) {
	intp := func(v int) *int { return &v }
	every := func(n int) []int { return slices.Repeat([]int{1}, n) }
	think0 := every(60)
	for t := 5; t < 60; t += 5 {
		think0[t] = 2
	}
	type outcome struct {
		requests, onTime, rejected, tooLate, unfinished, wasted int
		p95                                                     *int
	}
	tests := []struct {
		name     string
		s        AdmissionScenario
		want     outcome
		arrivals []int
	}{
		{"think 0", AdmissionScenario{Workers: 1, ServiceTime: 5, Queue: 0, Timeout: 10, Generator: GeneratorClosed, Users: 2, Think: 0, Duration: 60},
			outcome{71, 11, 59, 0, 1, 0, intp(5)}, think0},
		{"think 1", AdmissionScenario{Workers: 1, ServiceTime: 5, Queue: 0, Timeout: 10, Generator: GeneratorClosed, Users: 2, Think: 1, Duration: 60},
			outcome{60, 11, 48, 0, 1, 0, intp(5)}, every(60)},
		{"give-up at think 0", AdmissionScenario{Workers: 1, ServiceTime: 2, Queue: 0, Timeout: 1, Generator: GeneratorClosed, Users: 1, Think: 0, Duration: 5},
			outcome{5, 0, 2, 2, 1, 4, nil}, every(5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := SimulateAdmission(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			got := outcome{r.Requests, r.OnTime, r.Rejected, r.TooLate, r.Unfinished, r.WastedWorkerS, r.P95LatencyS}
			if got.requests != tt.want.requests || got.onTime != tt.want.onTime || got.rejected != tt.want.rejected ||
				got.tooLate != tt.want.tooLate || got.unfinished != tt.want.unfinished || got.wasted != tt.want.wasted || !eqp(got.p95, tt.want.p95) {
				t.Errorf("got %d requests: %d on time, %d rejected, %d too late, %d unfinished, %d wasted, p95 %v\nwant %d: %d, %d, %d, %d, %d, p95 %v",
					got.requests, got.onTime, got.rejected, got.tooLate, got.unfinished, got.wasted, testkit.Value(got.p95),
					tt.want.requests, tt.want.onTime, tt.want.rejected, tt.want.tooLate, tt.want.unfinished, tt.want.wasted, testkit.Value(tt.want.p95))
			}
			arrivals := make([]int, len(r.Timeline))
			for i, sec := range r.Timeline {
				arrivals[i] = sec.Arrivals
			}
			if !slices.Equal(arrivals, tt.arrivals) {
				t.Errorf("arrivals per second %v\nwant %v", arrivals, tt.arrivals)
			}
		})
	}
}

func TestAdmissionValidation(t *testing.T) {
	tests := []struct {
		name   string
		change func(*AdmissionScenario)
		field  string
	}{
		{"ramp ends before it starts", func(s *AdmissionScenario) { s.RampEnd = 5 }, "ramp_end_s"},
		{"no workers", func(s *AdmissionScenario) { s.Workers = 0 }, "workers"},
		{"no service time", func(s *AdmissionScenario) { s.ServiceTime = 0 }, "service_time_s"},
		{"negative queue", func(s *AdmissionScenario) { s.Queue = -1 }, "queue"},
		{"unknown generator", func(s *AdmissionScenario) { s.Generator = "poisson" }, "generator"},
		{"closed without users", func(s *AdmissionScenario) { s.Generator = GeneratorClosed; s.Users = 0 }, "users"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultAdmissionScenario()
			tt.change(&s)
			_, err := SimulateAdmission(s)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Errorf("got %v, want an error of the field %s", err, tt.field)
			}
		})
	}
}

// The concurrency scenario and its parsers name the field they reject.
func TestConcurrencyValidationNamesTheField(t *testing.T) {
	bad := func(change func(*ConcurrencyScenario)) error {
		s := DefaultConcurrencyScenario()
		change(&s)
		return s.Validate()
	}
	_, _, seedsErr := ParseSeeds("9-1")
	_, limitsErr := ParseLimits("0")
	_, durErr := ParseMixtureMs("75:80")
	for _, c := range []struct {
		err   error
		field string
	}{
		{bad(func(s *ConcurrencyScenario) { s.Requests = 0 }), "requests"},
		{bad(func(s *ConcurrencyScenario) { s.Timeout = 0 }), "timeout_ns"},
		{bad(func(s *ConcurrencyScenario) { s.SeedFrom, s.SeedTo = 9, 1 }), "seed_to"},
		{bad(func(s *ConcurrencyScenario) { s.Limits = []int{4, 0} }), "limits"},
		{bad(func(s *ConcurrencyScenario) { s.Durations.Kind = "weather" }), "durations"},
		{seedsErr, "seed_from"}, {limitsErr, "limits"}, {durErr, "durations"},
	} {
		var fe *FieldError
		if !errors.As(c.err, &fe) || fe.Field != c.field || c.err.Error() != c.field+": "+fe.Err.Error() {
			t.Errorf("got %v, want an error of the field %s", c.err, c.field)
		}
	}
}

func eqp(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func BenchmarkConcurrencyDefaultTable(b *testing.B) {
	sc := DefaultConcurrencyScenario()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SimulateConcurrency(sc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAdmissionOpeningRun(b *testing.B) {
	sc := DefaultAdmissionScenario()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SimulateAdmission(sc); err != nil {
			b.Fatal(err)
		}
	}
}
