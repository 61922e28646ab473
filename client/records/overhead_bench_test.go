package records_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// BenchmarkCallOverhead measures what a call costs beyond the service time
// the mock service was configured to take: the real time the call holds its
// permit (the budget's call duration) minus the configured service time,
// averaged over a C2 run of healthy records — 32 records in flight, each
// three enrichment calls of exactly 12 ms and one write of exactly 3 ms
// (the lab's healthy medians at time scale 0.1), with room for every write
// so that no call queues. It includes the round trip over loopback, both
// sides' scheduling and the mock service's timer overshoot. One iteration
// is one record.
//
//	go test -run '^$' -bench CallOverhead -benchtime 2000x -count 6 ./client/records
//
// Two knobs help take the overhead apart: OVERHEAD_COARSE=1 makes the mock
// service end its service times with the runtime's timers instead of its
// precise ones, and OVERHEAD_STRATEGY=sequential (or bounded:N, or any
// --strategy value) replaces C2.
func BenchmarkCallOverhead(b *testing.B) {
	const enrich, write = 12 * time.Millisecond, 3 * time.Millisecond
	cfg := config.Default()
	cfg.Records.Workers, cfg.Records.Queue = 64, 64
	p := cfg.Profiles[config.ProfileHealthy]
	p.Enrichment = latency.Spec{Kind: "fixed", Value: enrich}
	p.Records = latency.Spec{Kind: "fixed", Value: write}
	cfg.Profiles[config.ProfileHealthy] = p
	cfg.RequestLogCap = 0
	if os.Getenv("OVERHEAD_COARSE") != "" {
		cfg.Enrichment.PreciseTimers, cfg.Records.PreciseTimers = false, false
	}
	m := startMock(b, cfg)
	reg := prometheus.NewRegistry()
	rc := records.DefaultConfig()
	rc.Target, rc.Records, rc.Registerer, rc.Reset = m.url, b.N, reg, true
	strategy := "C2"
	if s := os.Getenv("OVERHEAD_STRATEGY"); s != "" {
		strategy = s // to look into the overhead: sequential, bounded:N
	}
	rc.Strategy, _ = records.ParseStrategy(strategy)
	b.ResetTimer()
	res, err := records.Run(context.Background(), rc)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if res.Complete != b.N {
		b.Fatalf("%d of %d records complete", res.Complete, b.N)
	}
	mean := meanCallSeconds(b, reg)
	b.ReportMetric((mean[records.Enrichment]-enrich.Seconds())*1e6, "µs-over/enrich")
	b.ReportMetric((mean[records.Records]-write.Seconds())*1e6, "µs-over/write")
}

// meanCallSeconds reads the mean call duration per dependency from the
// budgets' histogram (its sum and count are exact).
func meanCallSeconds(b *testing.B, reg *prometheus.Registry) map[string]float64 {
	b.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "loadlab_client_call_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			for _, l := range m.GetLabel() {
				if l.GetName() == "dependency" && h.GetSampleCount() > 0 {
					out[l.GetValue()] = h.GetSampleSum() / float64(h.GetSampleCount())
				}
			}
		}
	}
	return out
}
