package experiments

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// RunnerMetrics are the experiment runner's own Prometheus metrics. Labels
// are the experiment file's strategy, scenario and CPU setting names: a
// bounded set. A nil *RunnerMetrics records nothing.
type RunnerMetrics struct {
	runs     *prometheus.CounterVec
	accepted *prometheus.GaugeVec
	rejected *prometheus.GaugeVec
}

// NewRunnerMetrics creates the runner's metrics in reg. Like promauto, it
// panics if reg already holds metrics of these names.
func NewRunnerMetrics(reg prometheus.Registerer) *RunnerMetrics {
	labels := []string{"strategy", "scenario", "cpu"}
	f := promauto.With(reg)
	return &RunnerMetrics{
		runs: f.NewCounterVec(prometheus.CounterOpts{Namespace: "loadlab_experiment", Name: "runs_total",
			Help: "Client runs finished, by cell and status (valid, failed, contaminated or invalid)."}, append(labels, "status")),
		accepted: f.NewGaugeVec(prometheus.GaugeOpts{Namespace: "loadlab_experiment", Name: "last_accepted_per_lab_second",
			Help: "Accepted records per lab second of the cell's last run."}, labels),
		rejected: f.NewGaugeVec(prometheus.GaugeOpts{Namespace: "loadlab_experiment", Name: "last_write_rejections",
			Help: "Write 503/429 answers in the cell's last run."}, labels),
	}
}

func (m *RunnerMetrics) observe(r RunRecord) {
	if m == nil {
		return
	}
	m.runs.WithLabelValues(r.Cell.Strategy, r.Cell.Scenario, r.Cell.CPU, r.Status).Inc()
	if r.Valid() {
		m.accepted.WithLabelValues(r.Cell.Strategy, r.Cell.Scenario, r.Cell.CPU).Set(r.Metrics["accepted_per_second"])
		m.rejected.WithLabelValues(r.Cell.Strategy, r.Cell.Scenario, r.Cell.CPU).Set(r.Metrics["write_rejections"])
	}
}
