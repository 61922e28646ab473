package loadgen_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/mocktest"

	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice/config"
)

type mock struct {
	url   string
	admin api.Client
}

// startMock runs the real mock service on loopback until the test ends.
func startMock(t *testing.T, cfg config.Config) *mock {
	t.Helper()
	m := mocktest.Start(t, cfg)
	return &mock{url: m.URL, admin: m.Client}
}

// endpoint is the admission scenario's endpoint, as loadlab load starts it:
// the scenario's workers, service time and queue, 429 when full, with a tie
// window of tie model seconds.
func endpoint(sc models.AdmissionScenario, scale, tie float64) config.Config {
	return config.Endpoint(config.Station{Workers: sc.Workers, Queue: sc.Queue, RejectStatus: http.StatusTooManyRequests,
		TieWindow: time.Duration(tie * scale * float64(time.Second))}, time.Duration(sc.ServiceTime)*time.Second, scale)
}
