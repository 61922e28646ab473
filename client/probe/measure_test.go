package probe

import (
	"math"
	"testing"
	"time"
)

// A user busy back to back with 30 ms requests does 33.3 per second
// whatever the window: each request counts for its share inside it, where
// whole completions would give 30 or 40 in a 100 ms window. Counts and
// latencies are of the requests that completed inside the window.
func TestRecorderCountsSharesAtTheWindowEdges(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, offset := range []time.Duration{0, 5 * time.Millisecond, 17 * time.Millisecond} {
		rec := newRecorder(t0.Add(offset), 100*time.Millisecond)
		for start := t0.Add(-60 * time.Millisecond); start.Before(t0.Add(200 * time.Millisecond)); start = start.Add(30 * time.Millisecond) {
			rec.add(start, start.Add(30*time.Millisecond), outOK, "")
		}
		st := rec.step(1, 1000)
		if math.Abs(st.OKPerSecond-100.0/3) > 1e-9 || st.OK < 3 || st.OK > 4 || st.Requests != st.OK {
			t.Errorf("window from +%v: %.4f ok/s, %d completed; want 33.3333, 3 or 4", offset, st.OKPerSecond, st.OK)
		}
		if st.P50Seconds == nil || math.Abs(*st.P50Seconds-0.030) > 0.0001 || st.AtRateLimit {
			t.Errorf("window from +%v: p50 %v, at rate limit %v", offset, st.P50Seconds, st.AtRateLimit)
		}
	}
	rec := newRecorder(t0, time.Second)
	rec.add(t0.Add(-time.Second), t0.Add(-time.Millisecond), outError, "warm-up") // ended before the window
	rec.add(t0, t0.Add(time.Millisecond), outRejected, "")
	rec.add(t0, t0.Add(2*time.Millisecond), outTimeout, "")
	rec.add(t0, t0.Add(3*time.Millisecond), outError, "status 500")
	if st := rec.step(3, 1000); st.Requests != 3 || st.Rejected != 1 || st.Timeouts != 1 || st.Errors != 1 ||
		st.ErrorKinds["status 500"] != 1 || len(st.ErrorKinds) != 1 || st.P50Seconds != nil || st.RejectedPerSecond != 1 {
		t.Errorf("%+v", st)
	}
}

// A step's quantiles are its successes' distribution read from the same
// histogram as its percentiles: the fastest, the slowest, and between them
// the latency at each of QuantilePoints, in order.
func TestStepQuantiles(t *testing.T) {
	t0 := time.Unix(1000, 0)
	rec := newRecorder(t0, time.Minute)
	for ms := 1; ms <= 1000; ms++ { // 1 ms, 2 ms, … 1000 ms
		rec.add(t0, t0.Add(time.Duration(ms)*time.Millisecond), outOK, "")
	}
	rec.add(t0, t0.Add(5*time.Second), outRejected, "") // not a success: not in the distribution
	st := rec.step(8, 1000)
	if len(st.Quantiles) != len(QuantilePoints) {
		t.Fatalf("%d quantiles, want %d: %+v", len(st.Quantiles), len(QuantilePoints), st.Quantiles)
	}
	for i, q := range st.Quantiles {
		want := math.Max(QuantilePoints[i]*1.000, 0.001) // q of 1000 ms, the fastest 1 ms
		if q.Q != QuantilePoints[i] || math.Abs(q.Seconds-want) > 0.002*want+1e-6 {
			t.Errorf("quantile %d: %+v, want q %v at %.4f s", i, q, QuantilePoints[i], want)
		}
		if i > 0 && q.Seconds < st.Quantiles[i-1].Seconds {
			t.Errorf("quantile %v below the one before: %+v", q.Q, st.Quantiles)
		}
	}
	if st.Quantiles[7].Q != 0.5 || st.Quantiles[7].Seconds != *st.P50Seconds || st.Quantiles[len(st.Quantiles)-1].Seconds != *st.MaxSeconds {
		t.Errorf("median %+v (p50 %v), slowest %+v (max %v)", st.Quantiles[7], *st.P50Seconds, st.Quantiles[len(st.Quantiles)-1], *st.MaxSeconds)
	}
}
