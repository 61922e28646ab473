package records_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/mockservice/config"
)

// C5 on the real mock service under a sustained overload of the system of
// record: slow writes (150 ms), 32 records in flight (about 9 writes at
// once) against 6 workers. C5-vegas, started at a limit of 1, climbs and,
// with no queue (a 503 for every write past the sixth), keeps its write
// limit within ±1 of the 6 workers for most of the second half; with the
// lab's 6 queue slots it holds about Beta (2) writes waiting: 6 to 8. C5-aimd, with no
// queue (a 503 for every write past the sixth), moves within its bounds,
// falls after 503s, and gets fewer 503s than C2 on the same work; where it
// settles is logged, not asserted: by Netflix's rule (+1 per success in
// use, ×0.9 per drop) six workers finishing ~40 writes per lab second
// outpace the decreases, and the limit sits a few above the workers, with
// a steady share of 503s (measured: median 8 for 6 workers).
//
// In lab time on a fake clock: the RTTs an adaptive limit reads are the
// service's, with no timer slop of the machine's, so each run's figures
// are the same every time.
func TestC5AdaptsTheWriteLimit(t *testing.T) {
	t.Parallel()
	timed := func(c *records.Config) { c.Duration, c.SampleInterval = 20*time.Second, 10*time.Millisecond }
	// From a limit of 1: the no-load RTT is measured unloaded, then the
	// limit climbs to where writes start to queue or be refused.
	fromOne := func(c *records.Config) {
		timed(c)
		c.Strategy.Adaptive[records.Records] = strategy.AdaptiveLimit{Vegas: strategy.LabVegas(1, 1, strategy.C5RecordsCeiling)}
	}
	for _, tc := range []struct {
		queue  int
		lo, hi int // where the median must be
	}{
		{0, 5, 7}, // 503 past the sixth write: ±1 of the workers
		{6, 6, 8}, // a queue: about Beta (2) writes kept waiting
	} {
		t.Run(fmt.Sprintf("vegas queue %d", tc.queue), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				cfg := config.Default()
				cfg.Records.Queue, cfg.Profile = tc.queue, config.ProfileSlowWrite
				m := startMock(t, cfg)
				res := run(t, m, "C5-vegas", records.MaxRecords, fromOne)
				limits, within := secondHalfLimits(t, res, cfg.Records.Workers)
				med := limits[len(limits)/2]
				t.Logf("C5-vegas, %d queue slots: second half median write limit %d (range %d–%d), %d%% of %d samples within 6±1; 503s %d; %.1f accepted per lab s",
					tc.queue, med, limits[0], limits[len(limits)-1], 100*within/len(limits), len(limits), res.WriteRejections, res.AcceptedPerLabSecond)
				inBand := 0
				for _, l := range limits {
					if l >= tc.lo && l <= tc.hi {
						inBand++
					}
				}
				if med < tc.lo || med > tc.hi || inBand*4 < len(limits)*3 {
					t.Errorf("the write limit did not settle in [%d, %d]: median %d, %d of %d samples in", tc.lo, tc.hi, med, inBand, len(limits))
				}
			})
		})
	}
	t.Run("aimd", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			cfg := config.Default()
			cfg.Records.Queue, cfg.Profile = 0, config.ProfileSlowWrite
			m := startMock(t, cfg)
			c5 := run(t, m, "C5-aimd", records.MaxRecords, timed)
			c2 := run(t, m, "C2", records.MaxRecords, timed)
			limits, within := secondHalfLimits(t, c5, cfg.Records.Workers)
			t.Logf("C5-aimd: second half median write limit %d (range %d–%d), %d%% of samples within 6±1; 503s %d of %d writes, %.1f accepted per lab s; C2: 503s %d, %.1f accepted per lab s",
				limits[len(limits)/2], limits[0], limits[len(limits)-1], 100*within/len(limits), c5.WriteRejections,
				c5.Calls[records.Records]["ok"]+c5.WriteRejections, c5.AcceptedPerLabSecond, c2.WriteRejections, c2.AcceptedPerLabSecond)
			if c5.WriteRejections == 0 || c5.WriteRejections >= c2.WriteRejections {
				t.Errorf("write 503s: C5 %d, C2 %d; want some for C5 (the overload) and fewer than C2's", c5.WriteRejections, c2.WriteRejections)
			}
			if c5.AdaptiveLimits[records.Enrichment] == 0 || c5.AdaptiveLimits[records.Records] == 0 {
				t.Errorf("final limits %v", c5.AdaptiveLimits)
			}
		})
	})
}

// secondHalfLimits checks every sample's write limit is within C5's bounds
// and that the limit moved, and returns the limits sampled from the tenth
// lab second on, sorted, with how many are within ±1 of workers.
func secondHalfLimits(t *testing.T, res records.Result, workers int) (limits []int, within int) {
	t.Helper()
	seen := map[int]bool{}
	for _, s := range res.Timeline {
		l, ok := s.Limits[records.Records]
		if !ok {
			t.Fatalf("sample without the write limit: %+v", s)
		}
		if l < 1 || l > strategy.C5RecordsCeiling {
			t.Fatalf("write limit %d outside [1, %d]", l, strategy.C5RecordsCeiling)
		}
		seen[l] = true
		if s.T >= 10 {
			limits = append(limits, l)
		}
	}
	if len(limits) == 0 || len(seen) < 2 {
		t.Fatalf("the write limit did not move: %d samples in the second half, values %v", len(limits), seen)
	}
	slices.Sort(limits)
	for _, l := range limits {
		if l >= workers-1 && l <= workers+1 {
			within++
		}
	}
	return limits, within
}
