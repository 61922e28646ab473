package records_test

import (
	"slices"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/config"
)

// C5 (AIMD) on the real mock service under a sustained overload of the
// system of record: slow writes (150 ms), 32 records in flight (about 9
// writes at once) against 6 workers and no queue (a 503 for every write
// past the sixth). The write limit moves within its bounds, falls after
// 503s, and C5 gets fewer 503s than C2 on the same work. Where it settles
// is logged, not asserted: by Netflix's rule (+1 per success in use, ×0.9
// per drop) six workers finishing ~40 writes per lab second outpace the
// decreases, and the limit sits a few above the workers, with a steady
// share of 503s (measured: median 8 for 6 workers).
func TestC5AdaptsTheWriteLimit(t *testing.T) {
	cfg := config.Default()
	cfg.TimeScale, cfg.Records.Queue, cfg.Profile = 0.1, 0, config.ProfileSlowWrite
	m := startMock(t, cfg)
	timed := func(c *records.Config) { c.Duration, c.SampleInterval = 20*time.Second, 10*time.Millisecond }
	c5 := run(t, m, "C5", records.MaxRecords, 0.1, timed)
	c2 := run(t, m, "C2", records.MaxRecords, 0.1, timed)
	var limits []int
	seen := map[int]bool{}
	for _, s := range c5.Timeline {
		l, ok := s.Limits[records.Records]
		if !ok {
			t.Fatalf("sample without the write limit: %+v", s)
		}
		if l < 1 || l > records.C5RecordsCeiling {
			t.Fatalf("write limit %d outside [1, %d]", l, records.C5RecordsCeiling)
		}
		seen[l] = true
		if s.T >= 10 {
			limits = append(limits, l)
		}
	}
	if len(limits) == 0 || len(seen) < 3 {
		t.Fatalf("the write limit did not move: %d samples in the second half, values %v", len(limits), seen)
	}
	slices.Sort(limits)
	within := 0
	for _, l := range limits {
		if l >= cfg.Records.Workers-1 && l <= cfg.Records.Workers+1 {
			within++
		}
	}
	t.Logf("C5: second half median write limit %d (range %d–%d), %d%% of samples within 6±1; 503s %d of %d writes, %.1f accepted per lab s; C2: 503s %d, %.1f accepted per lab s",
		limits[len(limits)/2], limits[0], limits[len(limits)-1], 100*within/len(limits), c5.WriteRejections,
		c5.Calls[records.Records]["ok"]+c5.WriteRejections, c5.AcceptedPerLabSecond, c2.WriteRejections, c2.AcceptedPerLabSecond)
	if c5.WriteRejections == 0 || c5.WriteRejections >= c2.WriteRejections {
		t.Errorf("write 503s: C5 %d, C2 %d; want some for C5 (the overload) and fewer than C2's", c5.WriteRejections, c2.WriteRejections)
	}
	if c5.AdaptiveLimits[records.Enrichment] == 0 || c5.AdaptiveLimits[records.Records] == 0 {
		t.Errorf("final limits %v", c5.AdaptiveLimits)
	}
}
