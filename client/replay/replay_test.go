package replay_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/replay"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/field"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// A workload of 48 requests of 100 ms at the server's worker count (8) and
// unbounded, over real HTTP against the mock service in replay mode, under
// the race detector: every request is accounted for by the client and found
// in the server's log (Run fails otherwise), the limit is what is in
// flight at most, and bounded to the workers nothing queues and everything
// completes. The client's timeout (15 lab s, 1.5 real s) is far past the
// 0.6 lab s of work: this test counts requests, and a stall of the machine
// beside it must not turn one into a timeout. (The published workloads
// against the model are compare's TestReplayAgreesWithTheModelUnderRace
// and, timing included, TestReplayAgreesWithTheModelOnAFakeClock.)
func TestReplayCountsEveryRequest(t *testing.T) {
	const scale = 0.1
	cfg := config.Default()
	cfg.TimeScale, cfg.Replay = scale, true
	cfg.Enrichment = config.Station{Workers: 8, Queue: config.UnboundedQueue, RejectStatus: 503}
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	w := replay.Workload{Seed: 7, Durations: slices.Repeat([]time.Duration{100 * time.Millisecond}, 48)}
	for _, limit := range []int{8, 48} {
		tr, err := replay.Run(context.Background(), replay.Config{Target: m.URL, Limit: limit, Timeout: 15 * time.Second, TimeScale: scale}, w)
		if err != nil {
			t.Fatal(err)
		}
		got := tr.Metrics
		if tr.Seed != 7 || got.Completed+got.TimedOut != 48 || got.PeakInFlight != float64(limit) {
			t.Errorf("limit %d: seed %d, %+v; want 48 outcomes, %d in flight at most", limit, tr.Seed, got, limit)
		}
		if limit == 8 && (got.Completed != 48 || got.PeakQueue != 0) {
			t.Errorf("limit 8: %+v; want all 48 completed, none queued", got)
		}
	}
}

// A mock service not in replay mode refuses the replay: the run fails
// saying so instead of measuring drawn service times.
func TestReplayNeedsReplayMode(t *testing.T) {
	m := mocktest.Start(t, mocktest.Options{Config: config.Default()})
	_, err := replay.Run(context.Background(), replay.Config{Target: m.URL, Limit: 1, Timeout: 1e9, TimeScale: 1},
		replay.Workload{Seed: 1, Durations: []time.Duration{1}})
	if err == nil || !strings.Contains(err.Error(), "status 400 (is the mock service in replay mode?)") {
		t.Errorf("got %v", err)
	}
}

// A bad configuration is refused before anything is sent, naming its
// field; so is an empty workload.
func TestReplayRefusesBadInput(t *testing.T) {
	good := replay.Config{Target: "http://127.0.0.1:1", Limit: 1, Timeout: time.Second, TimeScale: 1}
	w := replay.Workload{Seed: 3, Durations: []time.Duration{time.Millisecond}}
	for _, c := range []struct {
		change func(*replay.Config)
		field  string
	}{
		{func(c *replay.Config) { c.Limit = 0 }, "limit"},
		{func(c *replay.Config) { c.TimeScale = 0 }, "time_scale"},
		{func(c *replay.Config) { c.Timeout = 0 }, "timeout"},
	} {
		cfg := good
		c.change(&cfg)
		_, err := replay.Run(context.Background(), cfg, w)
		if fe, ok := field.Of(err); !ok || fe.Field != c.field {
			t.Errorf("got %v, want an error of the field %s", err, c.field)
		}
	}
	if _, err := replay.Run(context.Background(), good, replay.Workload{Seed: 3}); err == nil || !strings.Contains(err.Error(), "workload 3 has no requests") {
		t.Errorf("an empty workload: %v", err)
	}
}
