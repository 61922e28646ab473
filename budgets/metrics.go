package budgets

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/loadlab/loadlab/mockservice/api"
)

const namespace = "loadlab_client"

// Metrics records calls per dependency, in Prometheus metrics and in plain
// counters a run can read back. It is safe for concurrent use. Create one
// per run and share it among that run's budgets.
type Metrics struct {
	inFlight, waiting, highWater *prometheus.GaugeVec
	limit                        *prometheus.GaugeVec
	permitWait, rateWait         *prometheus.HistogramVec
	callDuration                 *prometheus.HistogramVec
	calls                        *prometheus.CounterVec

	mu   sync.Mutex
	deps map[string]*depMetrics
}

// NewMetrics creates the metrics in reg (nil: registered nowhere, still
// readable through Snapshot). Like promauto, it panics if reg already holds
// metrics of these names: give each run a registry of its own.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	f := promauto.With(reg)
	classes := make([]string, len(Classes))
	for i, c := range Classes {
		classes[i] = string(c)
	}
	return &Metrics{
		inFlight: f.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "calls_in_flight",
			Help: "Calls holding a permit and in progress, per dependency."}, []string{"dependency"}),
		limit: f.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "limit",
			Help: "The adaptive concurrency limit now, per dependency with one (strategy C5)."}, []string{"dependency"}),
		waiting: f.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "permit_waiting",
			Help: "Callers waiting for a rate token or a permit, per dependency."}, []string{"dependency"}),
		highWater: f.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "calls_in_flight_high_water",
			Help: "Most calls in flight at once, per dependency, since the metrics were created."}, []string{"dependency"}),
		permitWait: f.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "permit_wait_seconds",
			Help: "Time spent waiting for a permit (after any rate token), by calls that waited for one.", Buckets: api.DurationBuckets}, []string{"dependency"}),
		rateWait: f.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "rate_wait_seconds",
			Help: "Time spent waiting for a rate token, by calls of rate-limited budgets.", Buckets: api.DurationBuckets}, []string{"dependency"}),
		callDuration: f.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "call_duration_seconds",
			Help: "Time of the call itself, from permit to answer.", Buckets: api.DurationBuckets}, []string{"dependency"}),
		calls: f.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "calls_total",
			Help: "Calls by how they ended: " + strings.Join(classes, ", ") + "."}, []string{"dependency", "class"}),
		deps: map[string]*depMetrics{},
	}
}

// DependencyStats is what a run reads back for one dependency.
type DependencyStats struct {
	Calls        map[Class]int `json:"calls"`
	PeakInFlight int           `json:"peak_in_flight"`
}

// Snapshot returns every dependency's counts so far.
func (m *Metrics) Snapshot() map[string]DependencyStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]DependencyStats, len(m.deps))
	for name, d := range m.deps {
		calls := make(map[Class]int, len(Classes))
		for _, c := range Classes {
			calls[c] = d.calls[c]
		}
		out[name] = DependencyStats{Calls: calls, PeakInFlight: d.peak}
	}
	return out
}

// InFlight returns the calls to dependency in flight now.
func (m *Metrics) InFlight(dependency string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.deps[dependency]; ok {
		return d.inFlight
	}
	return 0
}

// Register makes a dependency known before its first call, so its series
// exist (at zero) from the start.
func (m *Metrics) Register(dependency string) { m.dependency(dependency) }

type depMetrics struct {
	m                *Metrics
	name             string
	inFlight, peak   int
	calls            map[Class]int
	gInFlight, gWait prometheus.Gauge
	gHigh            prometheus.Gauge
	hPermit, hRate   prometheus.Observer
	hCall            prometheus.Observer
}

func (m *Metrics) dependency(name string) *depMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.deps[name]; ok {
		return d
	}
	d := &depMetrics{m: m, name: name, calls: map[Class]int{},
		gInFlight: m.inFlight.WithLabelValues(name), gWait: m.waiting.WithLabelValues(name),
		gHigh: m.highWater.WithLabelValues(name), hPermit: m.permitWait.WithLabelValues(name),
		hRate: m.rateWait.WithLabelValues(name), hCall: m.callDuration.WithLabelValues(name)}
	for _, c := range Classes {
		m.calls.WithLabelValues(name, string(c))
	}
	m.deps[name] = d
	return d
}

func (d *depMetrics) waiting(delta int) { d.gWait.Add(float64(delta)) }

func (d *depMetrics) start() {
	d.m.mu.Lock()
	d.inFlight++
	if d.inFlight > d.peak {
		d.peak = d.inFlight
		d.gHigh.Set(float64(d.peak))
	}
	d.m.mu.Unlock()
	d.gInFlight.Inc()
}

func (d *depMetrics) end() {
	d.m.mu.Lock()
	d.inFlight--
	d.m.mu.Unlock()
	d.gInFlight.Dec()
}

// record counts r and observes the waits the caller reached (a wait the
// budget does not have, or one after a failed wait, is not observed as 0).
func (d *depMetrics) record(r Result, reached stages) {
	d.m.mu.Lock()
	d.calls[r.Class]++
	d.m.mu.Unlock()
	d.m.calls.WithLabelValues(d.name, string(r.Class)).Inc()
	if reached.rate {
		d.hRate.Observe(r.RateWait.Seconds())
	}
	if reached.permit {
		d.hPermit.Observe(r.PermitWait.Seconds())
	}
	if r.Latency > 0 { // the call was made
		d.hCall.Observe(r.Latency.Seconds())
	}
}
