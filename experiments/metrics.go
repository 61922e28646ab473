package experiments

import (
	"github.com/prometheus/client_golang/prometheus"
)

// RunnerMetrics are the experiment runner's own Prometheus metrics. Labels
// are the experiment file's strategy, scenario and CPU setting names: a
// bounded set. A nil *RunnerMetrics records nothing.
type RunnerMetrics struct {
	runs     *prometheus.CounterVec
	accepted *prometheus.GaugeVec
	rejected *prometheus.GaugeVec
}

// NewRunnerMetrics registers the runner's metrics with reg.
func NewRunnerMetrics(reg prometheus.Registerer) (*RunnerMetrics, error) {
	labels := []string{"strategy", "scenario", "cpu"}
	m := &RunnerMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "loadlab_experiment", Name: "runs_total",
			Help: "Client runs finished, by cell and status (ok or failed)."}, append(labels, "status")),
		accepted: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "loadlab_experiment", Name: "last_accepted_per_lab_second",
			Help: "Accepted records per lab second of the cell's last run."}, labels),
		rejected: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "loadlab_experiment", Name: "last_write_rejections",
			Help: "Write 503/429 answers in the cell's last run."}, labels),
	}
	for _, c := range []prometheus.Collector{m.runs, m.accepted, m.rejected} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *RunnerMetrics) observe(r RunRecord, _ float64) {
	if m == nil {
		return
	}
	status := "ok"
	if r.Failed != "" {
		status = "failed"
	}
	m.runs.WithLabelValues(r.Cell.Strategy, r.Cell.Scenario, r.Cell.CPU, status).Inc()
	if r.Failed == "" {
		m.accepted.WithLabelValues(r.Cell.Strategy, r.Cell.Scenario, r.Cell.CPU).Set(r.Metrics["accepted_per_second"])
		m.rejected.WithLabelValues(r.Cell.Strategy, r.Cell.Scenario, r.Cell.CPU).Set(r.Metrics["write_rejections"])
	}
}
