package runner

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// Metrics are the experiment runner's own Prometheus metrics, a Progress
// that hears each run's end. Labels are the experiment file's strategy,
// scenario and CPU setting names: a bounded set.
type Metrics struct {
	NoProgress
	runs     *prometheus.CounterVec
	accepted *prometheus.GaugeVec
	rejected *prometheus.GaugeVec
}

// NewMetrics creates the runner's metrics in reg. Like promauto, it
// panics if reg already holds metrics of these names.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	labels := []string{"strategy", "scenario", "cpu"}
	f := promauto.With(reg)
	return &Metrics{
		runs: f.NewCounterVec(prometheus.CounterOpts{Namespace: "loadlab_experiment", Name: "runs_total",
			Help: "Client runs finished, by cell and status (valid, failed, contaminated or invalid)."}, append(labels, "status")),
		accepted: f.NewGaugeVec(prometheus.GaugeOpts{Namespace: "loadlab_experiment", Name: "last_accepted_per_lab_second",
			Help: "Accepted records per lab second of the cell's last run."}, labels),
		rejected: f.NewGaugeVec(prometheus.GaugeOpts{Namespace: "loadlab_experiment", Name: "last_write_rejections",
			Help: "Write 503/429 answers in the cell's last run."}, labels),
	}
}

// RunDone counts the run by its status and sets its cell's last figures.
func (m *Metrics) RunDone(r resultsfile.RunRecord, _, _ int, _ time.Duration) {
	m.runs.WithLabelValues(r.Cell.Strategy, r.Cell.Scenario, r.Cell.CPU, string(r.Status)).Inc()
	if r.Valid() {
		m.accepted.WithLabelValues(r.Cell.Strategy, r.Cell.Scenario, r.Cell.CPU).Set(r.Metrics["accepted_per_second"])
		m.rejected.WithLabelValues(r.Cell.Strategy, r.Cell.Scenario, r.Cell.CPU).Set(r.Metrics["write_rejections"])
	}
}
