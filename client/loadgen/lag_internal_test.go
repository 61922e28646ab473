package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/experiments/models"
)

// slowStart delays every request before it reaches the wire, like a sender
// that is slow to get going (a busy core, a slow connection set-up).
type slowStart struct{ next http.RoundTripper }

func (s slowStart) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(200 * time.Millisecond)
	return s.next.RoundTrip(r)
}

// Send lag is measured when the request has been written, not when it was
// admitted: a request admitted on time but written 200 ms late is a late
// start.
func TestSendLagIsTakenAtTheWrite(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	sc := models.DefaultAdmissionScenario()
	g := newGenerator(Config{Target: srv.URL, Scenario: sc, Arrivals: ArrivalsStep, TimeScale: 1, LateThreshold: 0.1}, RealClock)
	u, _ := url.Parse(srv.URL)
	n := newNetHTTP(u, 1, RealClock)
	n.client = &http.Client{Transport: slowStart{transport.New(1).Transport}}
	g.doer = n
	g.start = time.Now()
	req := g.newRequest(0, g.start)
	g.admitted(req)
	if reply, _ := g.send(context.Background(), req); reply != ReplyOnTime {
		t.Fatalf("reply %s", reply)
	}
	if g.late != 1 || g.maxLag < 200*time.Millisecond {
		t.Errorf("late %d, max lag %v; want one late start of ≥ 200 ms", g.late, g.maxLag)
	}
}
