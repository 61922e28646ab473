package loadgen_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/loadgen"
)

// The generator's memory is bounded by design (a pacer, not a schedule;
// counters and HDR histograms, not per-request records; records only for
// the join, at most MaxJoined). This measures it: uniform open load at
// LOADLAB_MEMORY_RATE requests/s (default 2000) for LOADLAB_MEMORY_SECONDS
// (default 60) against the mock service in a process of its own, sampling
// this process's heap every second. It runs only when LOADLAB_MEMORY is set
// (make reliability): a minute of load has no place in make test.
func TestGeneratorMemoryIsBounded(t *testing.T) {
	if os.Getenv("LOADLAB_MEMORY") == "" {
		t.Skip("set LOADLAB_MEMORY=1 to measure (make reliability)")
	}
	rate, seconds := envInt("LOADLAB_MEMORY_RATE", 2000), envInt("LOADLAB_MEMORY_SECONDS", 60)
	bin := filepath.Join(t.TempDir(), "mockservice")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/loadlab/loadlab/cmd/mockservice").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// A fast endpoint with room for the rate: 256 workers of 1 ms.
	mock := exec.Command(bin, "--listen", "127.0.0.1:0", "--enrichment-workers", "256", "--healthy-enrichment-median", "1ms")
	stdout, _ := mock.StdoutPipe()
	if err := mock.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Process.Kill(); _ = mock.Wait() })
	line := make([]byte, 256)
	n, _ := stdout.Read(line)
	url := strings.Fields(strings.TrimPrefix(string(line[:n]), "mockservice listening on "))[0]

	sc := loadgen.OpeningSchedule()
	sc.Duration, sc.BaseRate, sc.PeakRate = seconds, rate, rate
	done := make(chan struct{})
	var heap []uint64 // HeapInuse, MiB, once a second
	go func() {
		var ms runtime.MemStats
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				heap = append(heap, ms.HeapInuse>>20)
			}
		}
	}()
	res, err := loadgen.Load(context.Background(), loadgen.Config{Target: url + "/enrich", Schedule: sc,
		Arrivals: loadgen.ArrivalsUniform, TimeScale: 1, LateThreshold: loadgen.DefaultLateThreshold})
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	peak, firstThird, lastThird := uint64(0), uint64(0), uint64(0)
	for i, h := range heap {
		peak = max(peak, h)
		switch {
		case i < len(heap)/3:
			firstThird = max(firstThird, h)
		case i >= 2*len(heap)/3:
			lastThird = max(lastThird, h)
		}
	}
	t.Logf("%d requests/s for %d s: %d sent, %d on time, %d late, %d dropped; heap in use, MiB, per second: %v",
		rate, seconds, res.Requests, res.OnTime, res.LateStarts, res.Dropped, heap)
	fmt.Printf("memory: peak heap in use %d MiB; max over the first third %d MiB, over the last third %d MiB\n", peak, firstThird, lastThird)
	if peak > 64 {
		t.Errorf("peak heap in use %d MiB, over the 64 MiB bound", peak)
	}
	if lastThird > firstThird+8 {
		t.Errorf("heap grew with the run: %d MiB in the first third, %d MiB in the last", firstThird, lastThird)
	}
}

func envInt(name string, def int) int {
	var v int
	if _, err := fmt.Sscan(os.Getenv(name), &v); err != nil || v <= 0 {
		return def
	}
	return v
}
