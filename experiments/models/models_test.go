package models

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/latency"
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
	if got := secs(rep.Strategies[0].Median.ClientOutcomeMs); got != "11.518 s" {
		t.Errorf("sequential prints as %q, want 11.518 s", got)
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
				t.Errorf("p95 %v, full at %v, empty at %v; want 8, 15, 48", show(r.P95LatencyS), show(r.QueueFullAtS), show(r.QueueEmptyAtS))
			}
		}},
		{"queue 50", func(s *AdmissionScenario) { s.Queue = 50 }, func(t *testing.T, r AdmissionResult) {
			if r.Rejected != 70 || r.TooLate != 116 || r.OnTime != 96 || r.WastedWorkerS != 232 {
				t.Errorf("got %d rejected, %d too late, %d on time, %d wasted; want 70, 116, 96, 232", r.Rejected, r.TooLate, r.OnTime, r.WastedWorkerS)
			}
		}},
		{"closed, 16 users", func(s *AdmissionScenario) { s.Generator = GeneratorClosed; s.Users = 16 }, func(t *testing.T, r AdmissionResult) {
			if r.OnTime != 231 || !eqp(r.P95LatencyS, intp(3)) {
				t.Errorf("got %d on time, p95 %v; want 231, 3", r.OnTime, show(r.P95LatencyS))
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

func TestAdmissionValidation(t *testing.T) {
	tests := []struct {
		name   string
		change func(*AdmissionScenario)
	}{
		{"ramp ends before it starts", func(s *AdmissionScenario) { s.RampEnd = 5 }},
		{"no workers", func(s *AdmissionScenario) { s.Workers = 0 }},
		{"negative queue", func(s *AdmissionScenario) { s.Queue = -1 }},
		{"unknown generator", func(s *AdmissionScenario) { s.Generator = "poisson" }},
		{"closed without users", func(s *AdmissionScenario) { s.Generator = GeneratorClosed; s.Users = 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultAdmissionScenario()
			tt.change(&s)
			if _, err := SimulateAdmission(s); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func eqp(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

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
