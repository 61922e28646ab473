package replay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/replay"
	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// One published workload at the server's worker count and unbounded, over
// real HTTP against the mock service in replay mode, under the race
// detector: every request is accounted for by the client and found in the
// server's log (Run fails otherwise), at most the limit is in flight, and
// bounded to the workers nothing queues and everything completes, as in
// the model. The timing-dependent figures (who times out, the peak queue
// when 48 go at once) are compared by the CLI test, built without the race
// detector: cmd/loadlab TestSimulateRealAgreesWithTheModel.
func TestReplayCountsEveryRequest(t *testing.T) {
	const scale = 0.1
	sc := models.DefaultConcurrencyScenario()
	cfg := config.Default()
	cfg.TimeScale, cfg.Replay = scale, true
	cfg.Enrichment = config.Station{Workers: sc.Workers, Queue: config.UnboundedQueue, RejectStatus: 503}
	m := mocktest.Start(t, cfg)
	dist, err := sc.Durations.Build()
	if err != nil {
		t.Fatal(err)
	}
	w := models.Workload(dist, sc.Requests, 1)
	for _, limit := range []int{8, 48} {
		model := models.SimulateTrial(w, sc.Workers, limit, sc.Timeout)
		tr, err := replay.Run(context.Background(), replay.Config{Target: m.URL, Limit: limit, Timeout: sc.Timeout, TimeScale: scale}, 1, w)
		if err != nil {
			t.Fatal(err)
		}
		got := tr.Metrics
		if got.Completed+got.TimedOut != 48 || got.PeakInFlight != model.PeakInFlight {
			t.Errorf("limit %d: %+v; model %+v", limit, got, model)
		}
		if limit == 8 && (got.Completed != 48 || got.PeakQueue != 0 || model.Completed != 48 || model.PeakQueue != 0) {
			t.Errorf("limit 8: %+v; model %+v; want all 48 completed, none queued", got, model)
		}
	}
}

// A mock service not in replay mode refuses the replay: the run fails
// saying so instead of measuring drawn service times.
func TestReplayNeedsReplayMode(t *testing.T) {
	m := mocktest.Start(t, config.Default())
	_, err := replay.Run(context.Background(), replay.Config{Target: m.URL, Limit: 1, Timeout: 1e9, TimeScale: 1}, 1, []time.Duration{1})
	if err == nil || !strings.Contains(err.Error(), "status 400 (is the mock service in replay mode?)") {
		t.Errorf("got %v", err)
	}
}
