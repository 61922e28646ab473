package loadgen

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkSleep reports how long a sleep of 20, 100 and 500 µs takes in
// a process with one processor, as the pacer's are: the runtime waits for
// its timers in epoll_wait, whose timeout is whole milliseconds.
//
//	go test -run '^$' -bench Sleep -benchtime 2000x ./client/loadgen
func BenchmarkSleep(b *testing.B) {
	for _, d := range []time.Duration{20 * time.Microsecond, 100 * time.Microsecond, 500 * time.Microsecond} {
		b.Run(d.String(), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			var slept time.Duration
			for range b.N {
				t0 := time.Now()
				time.Sleep(d)
				slept += time.Since(t0)
			}
			b.ReportMetric(float64(slept.Microseconds())/float64(b.N), "slept-µs")
		})
	}
}
