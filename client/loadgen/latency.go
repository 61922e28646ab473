package loadgen

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in real microseconds, from 1 µs to one hour, to 3
// significant digits: a fixed ~150 KB whatever the run's length.
const (
	latencyLowest  = 1
	latencyHighest = int64(time.Hour / time.Microsecond)
	latencyDigits  = 3
)

func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(latencyLowest, latencyHighest, latencyDigits)
}

// record adds d to h, clamped to the histogram's range (a latency beyond an
// hour is recorded as an hour; the run's timeout is far below).
func record(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(min(max(d.Microseconds(), latencyLowest), latencyHighest))
}

// Latency summarises a latency histogram, in model seconds.
type Latency struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_s"`
	P90   float64 `json:"p90_s"`
	P95   float64 `json:"p95_s"`
	P99   float64 `json:"p99_s"`
	P999  float64 `json:"p99_9_s"`
	Max   float64 `json:"max_s"`
}

// summarise reads h in model seconds of unit. Quantiles are by nearest
// rank, the value at rank ceil(q·n), as the models compute them (HDR's own
// rank rounds q·n half up), to HDR's precision.
func summarise(h *hdrhistogram.Histogram, unit time.Duration) Latency {
	n := h.TotalCount()
	if n == 0 {
		return Latency{}
	}
	s := func(us int64) float64 { return float64(time.Duration(us)*time.Microsecond) / float64(unit) }
	q := func(p float64) float64 {
		rank := math.Ceil(p * float64(n))
		return s(h.ValueAtPercentile(100 * rank / float64(n)))
	}
	return Latency{Count: n, P50: q(0.5), P90: q(0.9), P95: q(0.95), P99: q(0.99), P999: q(0.999), Max: s(h.Max())}
}
