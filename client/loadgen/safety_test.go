package loadgen_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/field"
)

// recorder is a foreign HTTP endpoint that notes every request it gets and
// answers with status.
type recorder struct {
	mu     sync.Mutex
	seen   map[string]int
	status int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen[req.Method+" "+req.URL.Path]++
	r.mu.Unlock()
	if r.status/100 == 3 {
		w.Header().Set("Location", "/account/delete?confirm=yes")
	}
	w.WriteHeader(r.status)
}

func startRecorder(t *testing.T, status int) (*recorder, string) {
	r := &recorder{seen: map[string]int{}, status: status}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv.URL
}

// Against a target that is not a loadlab mock service, the generator asks
// nothing but the load path: no reset, no metrics, no request log.
func TestForeignTargetGetsOnlyTheLoad(t *testing.T) {
	rec, url := startRecorder(t, http.StatusOK)
	sc := loadgen.OpeningSchedule()
	sc.Duration, sc.BaseRate, sc.PeakRate = 4, 3, 3
	res, err := loadgen.Load(context.Background(), loadgen.Config{Target: url + "/api/orders", Schedule: sc,
		Arrivals: loadgen.ArrivalsStep, TimeScale: 0.05, LateThreshold: notLate})
	if err != nil {
		t.Fatal(err)
	}
	for req := range rec.seen {
		if req != "POST /api/orders" && req != "OPTIONS /api/orders" {
			t.Errorf("the foreign target was sent %q", req)
		}
	}
	// 12 arrivals, each sent, or behind when a busy host kept the
	// generator from sending it in time (the run lasts 0.2 s real).
	if res.Scheduled != 12 || res.Requests+res.Dropped+res.Behind != 12 || res.Requests == 0 ||
		rec.seen["POST /api/orders"] != res.Requests || res.OnTime != res.Requests || res.ServerIdentified || res.ServerJoined {
		t.Errorf("requests %v; result %d scheduled, %d sent (%d on time), %d dropped, %d behind, identified %v, joined %v",
			rec.seen, res.Scheduled, res.Requests, res.OnTime, res.Dropped, res.Behind, res.ServerIdentified, res.ServerJoined)
	}
}

// A status outside 2xx, 429 and 503 is error_status, counted per code, and
// is not a transport error.
func TestErrorStatusIsItsOwnOutcome(t *testing.T) {
	_, url := startRecorder(t, http.StatusNotFound)
	sc := loadgen.OpeningSchedule()
	sc.Duration, sc.BaseRate, sc.PeakRate = 2, 2, 2
	res, err := loadgen.Load(context.Background(), loadgen.Config{Target: url + "/missing", Schedule: sc,
		Arrivals: loadgen.ArrivalsStep, TimeScale: 0.05, LateThreshold: notLate})
	if err != nil {
		t.Fatal(err)
	}
	// Every request sent is a 404 (one a busy host kept the generator
	// from sending in time is behind, not sent).
	if res.Scheduled != 4 || res.Requests+res.Behind+res.Dropped != 4 || res.Requests == 0 ||
		res.ErrorStatus != res.Requests || res.StatusCodes[404] != res.Requests || res.TransportErrors != 0 || res.Unfinished != 0 {
		t.Errorf("%d scheduled, %d sent, %d behind, %d dropped; error status %d %v, transport errors %d, unfinished %d; want every request sent a 404 and nothing else",
			res.Scheduled, res.Requests, res.Behind, res.Dropped, res.ErrorStatus, res.StatusCodes, res.TransportErrors, res.Unfinished)
	}
}

// Work the server dropped when its client left is cancelled, with no wasted
// work, not too_late. At time scale 0.25 (the client gives up after 250 ms
// real): at 0.05 a busy host once kept a request from reaching the server
// within the 50 ms its client waited, and the server's log, which never
// saw it, could not join it.
func TestServerCancelledWorkIsCancelled(t *testing.T) {
	const scale = 0.25
	sc, e := loadgen.OpeningRun()
	sc.Duration, sc.BaseRate, sc.PeakRate, sc.Timeout = 4, 2, 2, 1
	e.Workers, e.Queue = 1, 10
	cfg := endpoint(e, scale, 0)
	cfg.Enrichment.CancelOnDisconnect = true
	m := startMock(t, cfg)
	res, err := loadgen.Load(context.Background(), loadgen.Config{Target: m.url + "/enrich", Schedule: sc,
		Arrivals: loadgen.ArrivalsStep, TimeScale: scale, LateThreshold: notLate})
	if err != nil {
		t.Fatal(err)
	}
	if res.Cancelled == 0 || res.TooLate != 0 || res.WastedWorkerS != 0 || !res.ServerJoined {
		t.Errorf("cancelled %d, too late %d, wasted %.2f, joined %v", res.Cancelled, res.TooLate, res.WastedWorkerS, res.ServerJoined)
	}
	if sum := sumOutcomes(res); sum != res.Requests {
		t.Errorf("outcomes add up to %d of %d", sum, res.Requests)
	}
}

// notLate is a late threshold for tests whose subject is not lateness: a
// whole model second, which no arrival misses even under -race.
const notLate = 1.0

func sumOutcomes(r loadgen.Result) int {
	n := 0
	for _, v := range r.Outcomes() {
		n += v
	}
	return n
}

// A loadlab mock at another time scale would make every figure wrong.
func TestTimeScaleMismatchIsRefused(t *testing.T) {
	cfg := config.Default()
	cfg.TimeScale = 0.1
	m := startMock(t, cfg)
	_, err := loadgen.Load(context.Background(), loadgen.Config{Target: m.url + "/enrich", Schedule: loadgen.OpeningSchedule(),
		Arrivals: loadgen.ArrivalsStep, TimeScale: 0.2})
	if !errors.Is(err, loadgen.ErrTimeScaleMismatch) || !strings.Contains(err.Error(), "0.1") {
		t.Errorf("got %v, want ErrTimeScaleMismatch naming both scales", err)
	}
	st, err := m.admin.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Stations["enrichment"].Requests; n["served"]+n["rejected"] != 0 {
		t.Errorf("load was sent: %v", n)
	}
}

// An interrupted run returns what it measured, marked partial.
func TestInterruptedRunIsPartial(t *testing.T) {
	sc, e := loadgen.OpeningRun()
	m := startMock(t, endpoint(e, 0.05, 0))
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond) // 12 of 60 model seconds
	defer cancel()
	res, err := loadgen.Load(ctx, loadgen.Config{Target: m.url + "/enrich", Schedule: sc, Arrivals: loadgen.ArrivalsStep, TimeScale: 0.05, LateThreshold: notLate})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial || res.Requests == 0 || res.Requests >= 300 || sumOutcomes(res) != res.Requests {
		t.Errorf("partial %v, %d requests (outcomes %d); want a partial count of the first seconds", res.Partial, res.Requests, sumOutcomes(res))
	}
}

// Input beyond the limits is refused before anything is sent, naming the
// limit.
func TestInputCaps(t *testing.T) {
	sc := loadgen.OpeningSchedule()
	sc.Duration = loadgen.MaxDuration + 1
	if err := (loadgen.Config{Target: "http://127.0.0.1:1/", Schedule: sc, Arrivals: loadgen.ArrivalsStep, TimeScale: 1}).Validate(); !field.Is(err, "duration_s") || !strings.Contains(err.Error(), "86400") {
		t.Errorf("duration: %v", err)
	}
	sc = loadgen.OpeningSchedule()
	sc.BaseRate, sc.PeakRate = 1<<40, 1<<40
	if err := (loadgen.Config{Target: "http://127.0.0.1:1/", Schedule: sc, Arrivals: loadgen.ArrivalsStep, TimeScale: 1}).Validate(); !field.Is(err, "duration_s") || !strings.Contains(err.Error(), "100000000") {
		t.Errorf("arrivals: %v", err)
	}
	sc = loadgen.OpeningSchedule()
	sc.Mode, sc.Users = loadgen.Closed, loadgen.MaxUsers+1
	if err := (loadgen.Config{Target: "http://127.0.0.1:1/", Schedule: sc, Arrivals: loadgen.ArrivalsStep, TimeScale: 1}).Validate(); !field.Is(err, "users") || !strings.Contains(err.Error(), "100000") {
		t.Errorf("users: %v", err)
	}
}

// A mock that refuses its reset (a token is needed) is refused before any
// load is sent, saying so.
func TestRefusedResetIsRefused(t *testing.T) {
	cfg := config.Default()
	cfg.AdminToken, cfg.TimeScale = "sekret", 0.05
	m := startMock(t, cfg)
	_, err := loadgen.Load(context.Background(), loadgen.Config{Target: m.url + "/enrich", Schedule: loadgen.OpeningSchedule(),
		Arrivals: loadgen.ArrivalsStep, TimeScale: 0.05, LateThreshold: notLate})
	if !errors.Is(err, loadgen.ErrAdmin) || !strings.Contains(err.Error(), "401") {
		t.Errorf("got %v, want ErrAdmin with the mock's 401", err)
	}
}

// A redirect is the target's answer, not an invitation: it is counted as an
// error status, and the place it points to is never asked.
func TestRedirectsAreNotFollowed(t *testing.T) {
	rec, url := startRecorder(t, http.StatusFound)
	sc := loadgen.OpeningSchedule()
	sc.Duration, sc.BaseRate, sc.PeakRate = 2, 2, 2
	for _, client := range []loadgen.HTTPClient{loadgen.ClientNetHTTP, loadgen.ClientFastHTTP} {
		res, err := loadgen.Load(context.Background(), loadgen.Config{Target: url + "/orders", Schedule: sc,
			Arrivals: loadgen.ArrivalsStep, TimeScale: 0.05, Client: client, LateThreshold: notLate})
		if err != nil {
			t.Fatal(err)
		}
		if res.OnTime != 0 || res.ErrorStatus != 4 || res.StatusCodes[http.StatusFound] != 4 {
			t.Errorf("%s: on time %d, error status %d %v; want 4 × 302 counted as error status", client, res.OnTime, res.ErrorStatus, res.StatusCodes)
		}
	}
	for req := range rec.seen {
		if !strings.HasSuffix(req, " /orders") {
			t.Errorf("the target was sent %q", req)
		}
	}
}
