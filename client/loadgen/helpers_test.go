package loadgen_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/mocktest"
)

type mock struct {
	url   string
	admin api.Client
	dial  transport.Dialer
}

// startMock runs the real mock service on loopback until the test ends.
func startMock(t *testing.T, cfg config.Config) *mock {
	t.Helper()
	m := mocktest.Start(t, mocktest.Options{Config: cfg})
	return &mock{url: m.URL, admin: m.Client}
}

// startMemory runs the real mock service on an in-memory network until
// the test (its synctest bubble) ends: give the generator inMemory(m).
func startMemory(t *testing.T, cfg config.Config) *mock {
	t.Helper()
	m := mocktest.Start(t, mocktest.Options{Config: cfg, InMemory: true})
	return &mock{url: m.URL, admin: m.Client, dial: m.Dial}
}

// inMemory is cfg sending to m over its in-memory network: the net/http
// client, and a process that uses no CPU time, as the fake clock has it
// (the send pool grows only while there is CPU to spare).
func inMemory(cfg loadgen.Config, m *mock) loadgen.Config {
	cfg.Client, cfg.Dial = loadgen.ClientNetHTTP, m.dial
	cfg.CPU = func() (time.Duration, bool) { return 0, true }
	return cfg
}

// endpoint is the endpoint e describes, as loadlab load starts it: its
// workers, service time and queue, 429 when full, with a tie window of tie
// model seconds.
func endpoint(e loadgen.Endpoint, scale, tie float64) config.Config {
	return config.Endpoint(config.Station{Workers: e.Workers, Queue: e.Queue, RejectStatus: http.StatusTooManyRequests,
		TieWindow: time.Duration(tie * scale * float64(time.Second))}, time.Duration(e.ServiceTime)*time.Second, scale)
}

// modelLate is the late threshold of the runs compared outcome by outcome
// (step arrivals at time scale 0.1): three times the default, 30 ms, still
// inside the model's step (100 ms), where an outcome does not depend on
// when in its step an arrival comes. At 10 ms, the pacer's timers, waking
// 3–18 ms late under -race beside the in-process endpoint, left arrivals
// behind in most attempts.
const modelLate = 3 * loadgen.DefaultLateThreshold

// startWhole starts schedule sc, step arrivals, against a fresh endpoint
// e, as loadlab load does without --target, in memory (in a synctest
// bubble); wait returns its result.
func startWhole(t *testing.T, sc loadgen.Schedule, e loadgen.Endpoint) (wait func() loadgen.Result) {
	t.Helper()
	const scale = 1
	m := startMemory(t, endpoint(e, scale, loadgen.DefaultTieWindowStep))
	var res loadgen.Result
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err = loadgen.Load(context.Background(), inMemory(loadgen.Config{Target: m.url + "/enrich", Schedule: sc, Endpoint: e,
			Arrivals: loadgen.ArrivalsStep, TimeScale: scale, LateThreshold: modelLate, TieWindow: loadgen.DefaultTieWindowStep}, m))
	}()
	return func() loadgen.Result {
		t.Helper()
		<-done
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
}
