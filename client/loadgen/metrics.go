package loadgen

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// metrics are the generator's own Prometheus metrics.
type metrics struct {
	scheduled, sent, dropped, behind prometheus.Counter
	// replies is loadlab_load_client_outcomes_total's counter of each
	// Reply, resolved once rather than looked up by label per request.
	replies map[Reply]prometheus.Counter
	lag     prometheus.Histogram
}

// newMetrics creates the metrics in reg (nil: registered nowhere). Like
// promauto, it panics if reg already holds metrics of these names: give
// each run a registry of its own.
func newMetrics(reg prometheus.Registerer) *metrics {
	const ns = "loadlab_load"
	f := promauto.With(reg)
	outcomes := f.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "client_outcomes_total",
		Help: "Client-side outcomes: on_time, rejected, gave_up, pending (run ended first), error."}, []string{"outcome"})
	replies := map[Reply]prometheus.Counter{}
	for _, r := range []Reply{ReplyOnTime, ReplyRejected, ReplyStatus, ReplyTransport, ReplyGaveUp, ReplyPending} {
		replies[r] = outcomes.WithLabelValues(string(r))
	}
	return &metrics{replies: replies,
		scheduled: f.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "scheduled_total",
			Help: "Arrivals the schedule called for."}),
		sent: f.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "sent_total",
			Help: "Arrivals sent."}),
		dropped: f.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "dropped_total",
			Help: "Arrivals not sent because the generator's in-flight cap was reached."}),
		behind: f.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "behind_total",
			Help: "Arrivals that fell due and were not sent within the late threshold, or before the run ended."}),
		lag: f.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "send_lag_seconds",
			Help: "How late arrivals were sent after their scheduled time.", Buckets: prometheus.ExponentialBucketsRange(1e-5, 10, 25)}),
	}
}
