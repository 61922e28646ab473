package loadgen_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/config"
)

type mock struct {
	url string
	svc *mockservice.Service
}

// startMock runs the real mock service on loopback until the test ends.
func startMock(t *testing.T, cfg config.Config) *mock {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	svc, url, stop, err := mockservice.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	return &mock{url: url, svc: svc}
}

// endpoint is the admission scenario's endpoint, as loadlab load starts it:
// the scenario's workers, service time and queue, 429 when full, with a tie
// window of tie model seconds.
func endpoint(sc models.AdmissionScenario, scale, tie float64) config.Config {
	return config.Endpoint(config.Station{Workers: sc.Workers, Queue: sc.Queue, RejectStatus: http.StatusTooManyRequests,
		TieWindow: time.Duration(tie * scale * float64(time.Second))}, time.Duration(sc.ServiceTime)*time.Second, scale)
}
