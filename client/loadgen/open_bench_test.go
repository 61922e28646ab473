package loadgen

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkOpen runs the open generator, uniform arrivals at each rate of
// LOADGEN_RATES (requests/s; default 10000 40000) for LOADGEN_SECONDS
// (default 5), this process pinned to CPU 0 with GOMAXPROCS 1 and the bare
// endpoint (200 "ok") pinned to CPU 1. It reports, per rate: the CPU µs of
// this process per scheduled request, the requests sent per second of the
// run, and the late starts, drops and arrivals behind as % of scheduled.
// Side by side, in interleaved rounds:
//
//	for i in 1 2 3; do go test -run '^$' -bench Open -benchtime 1x ./client/loadgen; done
func BenchmarkOpen(b *testing.B) {
	target := startEndpoint(b, 1)
	pinProcess(0)
	procs := runtime.GOMAXPROCS(1)
	defer func() {
		runtime.GOMAXPROCS(procs)
		unpinProcess()
	}()
	rates := strings.Fields(os.Getenv("LOADGEN_RATES"))
	if len(rates) == 0 {
		rates = []string{"10000", "40000"}
	}
	seconds := 5
	if s := os.Getenv("LOADGEN_SECONDS"); s != "" {
		seconds, _ = strconv.Atoi(s)
	}
	maxInFlight, _ := strconv.Atoi(os.Getenv("LOADGEN_MAX_IN_FLIGHT"))
	for _, r := range rates {
		rate, err := strconv.Atoi(r)
		if err != nil || rate < 1 {
			b.Fatalf("LOADGEN_RATES: %q is not a rate", r)
		}
		b.Run(r, func(b *testing.B) {
			runtime.GOMAXPROCS(1) // testing sets it for each benchmark
			var cpu time.Duration
			var sent, late, dropped, behind, scheduled, senders int
			for range b.N {
				cfg := Config{Target: target.String(), TimeScale: 1, Arrivals: ArrivalsUniform,
					Schedule: Schedule{Mode: Open, Timeout: 10, BaseRate: rate, PeakRate: rate, Duration: seconds}, MaxInFlight: maxInFlight}
				c0 := cpuTime()
				res, err := Load(context.Background(), cfg)
				cpu += cpuTime() - c0
				if err != nil {
					b.Fatal(err)
				}
				sent += res.Requests
				late += res.LateStarts
				dropped += res.Dropped
				behind += res.Behind
				senders = max(senders, res.Senders)
				scheduled += rate * seconds
			}
			pct := func(n int) float64 { return 100 * float64(n) / float64(scheduled) }
			b.ReportMetric(float64(cpu.Microseconds())/float64(scheduled), "cpu-µs/req")
			b.ReportMetric(float64(sent)/float64(b.N*seconds), "sent/s")
			b.ReportMetric(pct(late), "late-%")
			b.ReportMetric(pct(dropped), "dropped-%")
			b.ReportMetric(pct(behind), "behind-%")
			b.ReportMetric(float64(senders), "senders")
		})
	}
}
