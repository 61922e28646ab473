package records_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// BenchmarkCallOverhead measures what a call costs beyond the service time
// the mock service planned for it: the real time the call holds its permit
// (the budget's call duration) minus the planned service time, averaged
// over a C2 run of healthy records at time scale 0.1 — 32 records in
// flight, each three enrichment calls (log-normal, median 12 ms) and one
// write (3 ms), with room for every write so that no call queues. The
// planned times are the mock service's own draws: its generators are
// seeded and reset before the run, and draw in service order, so the sum
// of the first n draws of each station's distribution is the sum of what
// it planned for the run's n calls. The overhead includes the round trip
// over loopback, both sides' scheduling and CPU (client and mock service
// share this process) and the mock service's timer overshoot. One
// iteration is one record.
//
//	go test -run '^$' -bench CallOverhead -benchtime 2000x -count 6 ./client/records
//
// Knobs to take the overhead apart: OVERHEAD_FIXED=1 makes every enrichment
// exactly 12 ms (calls then start and end in step, and wait for the CPU
// together); OVERHEAD_PRECISE=1 makes the mock service end its service
// times with its precise timers instead of the runtime's (off by default);
// OVERHEAD_STRATEGY=sequential (or bounded:N, or any --strategy value)
// replaces C2.
func BenchmarkCallOverhead(b *testing.B) {
	cfg := config.Default()
	cfg.TimeScale = 0.1
	cfg.Records.Workers, cfg.Records.Queue = 64, 64
	if os.Getenv("OVERHEAD_FIXED") != "" {
		p := cfg.Profiles[config.ProfileHealthy]
		p.Enrichment = latency.Spec{Kind: "fixed", Value: 120 * time.Millisecond}
		cfg.Profiles[config.ProfileHealthy] = p
	}
	cfg.RequestLogCap = 0
	if os.Getenv("OVERHEAD_PRECISE") != "" {
		cfg.Enrichment.PreciseTimers, cfg.Records.PreciseTimers = true, true
	}
	m := startLoopback(b, cfg)
	reg := prometheus.NewRegistry()
	rc := records.DefaultConfig()
	rc.Target, rc.Records, rc.Registerer, rc.Reset, rc.TimeScale = m.url, b.N, reg, true, cfg.TimeScale
	name := "C2"
	if s := os.Getenv("OVERHEAD_STRATEGY"); s != "" {
		name = s // to look into the overhead: sequential, bounded:N
	}
	rc.Strategy, _ = strategy.Parse(name)
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
	enrich, write := plannedMeans(b, cfg, 3*b.N, b.N)
	b.ReportMetric((mean[records.Enrichment]-enrich)*1e6, "µs-over/enrich")
	b.ReportMetric((mean[records.Records]-write)*1e6, "µs-over/write")
}

// plannedMeans is the mean service time, in seconds, that a freshly reset
// mock service with cfg plans for its first nEnrich enrichment calls and
// first nWrite writes: the same seeded draws, in the same order.
func plannedMeans(b *testing.B, cfg config.Config, nEnrich, nWrite int) (enrich, write float64) {
	b.Helper()
	de, dr, err := cfg.Profiles[cfg.Profile].Build()
	if err != nil {
		b.Fatal(err)
	}
	mean := func(d latency.Distribution, seed uint32, n int) float64 {
		src, sum := latency.NewMulberry32(seed), 0.0
		for range n {
			sum += float64(d.Sample(src)) * cfg.TimeScale
		}
		return sum / float64(n) / 1e9
	}
	// The stations' seeds, as mockservice.New gives them.
	return mean(de, cfg.Seed, nEnrich), mean(dr, api.RecordsSeed(cfg.Seed), nWrite)
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
