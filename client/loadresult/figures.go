package loadresult

import (
	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/threshold"
)

// Figures are the figures of r a threshold can name: the top-level
// numbers of its JSON (requests, on_time, rejected, too_late, unfinished,
// timed_out, error_status, transport_errors, dropped, behind, …), and the
// latency users feel — from each request's scheduled time, of the
// requests answered on time — in lab milliseconds: p50_ms, p90_ms,
// p95_ms, p99_ms, max_ms. Percentages are of Requests.
func Figures(r loadgen.Result) map[string]float64 {
	f := threshold.Figures(r)
	l := r.LatencyFromSchedule
	for k, v := range map[string]float64{"p50_ms": l.P50, "p90_ms": l.P90, "p95_ms": l.P95, "p99_ms": l.P99, "max_ms": l.Max} {
		f[k] = 1000 * v
	}
	return f
}
