package loadgen

import (
	"fmt"
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

// NewLatencyHistogram is an empty latency histogram of that range and
// precision, as a Result's are.
func NewLatencyHistogram() *hdrhistogram.Histogram {
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

// SetLatency sets r's latency figures from the histograms of its on-time
// requests' latencies from their scheduled time and from their sending
// (real microseconds; unit is one model second): the summaries, the
// histograms' encodings (the _hdr keys) and p95_latency_s.
func (r *Result) SetLatency(fromSchedule, fromSend *hdrhistogram.Histogram, unit time.Duration) {
	r.LatencyFromSchedule, r.LatencyFromSend = summarise(fromSchedule, unit), summarise(fromSend, unit)
	r.LatencyFromScheduleHDR, r.LatencyFromSendHDR = encodeHistogram(fromSchedule), encodeHistogram(fromSend)
	r.P95LatencyS = nil
	if r.LatencyFromSchedule.Count > 0 {
		p := r.LatencyFromSchedule.P95
		r.P95LatencyS = &p
	}
}

// LatencyHistograms decodes r's two latency histograms (its _hdr keys),
// each checked against its summary's count, and says which does not
// decode or holds another count.
func (r Result) LatencyHistograms() (fromSchedule, fromSend *hdrhistogram.Histogram, err error) {
	if fromSchedule, err = decodeLatency(r.LatencyFromScheduleHDR, r.LatencyFromSchedule.Count); err != nil {
		return nil, nil, fmt.Errorf("latency_from_schedule: %w", err)
	}
	if fromSend, err = decodeLatency(r.LatencyFromSendHDR, r.LatencyFromSend.Count); err != nil {
		return nil, nil, fmt.Errorf("latency_from_send: %w", err)
	}
	return fromSchedule, fromSend, nil
}

// encodeHistogram is h in HDR's V2 compressed encoding, in base64 (what
// Decode reads); "" if it cannot be encoded.
func encodeHistogram(h *hdrhistogram.Histogram) string {
	if h == nil {
		return ""
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b)
}

// decodeLatency decodes an encoded latency histogram that must hold count
// values; "" is an empty histogram, when count is 0.
func decodeLatency(enc string, count int64) (*hdrhistogram.Histogram, error) {
	if enc == "" {
		if count != 0 {
			return nil, fmt.Errorf("no histogram (its _hdr key) for %d latencies", count)
		}
		return NewLatencyHistogram(), nil
	}
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		return nil, fmt.Errorf("the histogram does not decode: %w", err)
	}
	if h.TotalCount() != count {
		return nil, fmt.Errorf("the histogram holds %d latencies, the summary counts %d", h.TotalCount(), count)
	}
	return h, nil
}
