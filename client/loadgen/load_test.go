package loadgen_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loadlab/loadlab/client/loadgen"
)

// An overloaded generator (its in-flight cap reached) drops arrivals and
// says so; it never sends them late in silence.
func TestOverloadedGeneratorReportsDrops(t *testing.T) {
	sc, e := loadgen.OpeningRun()
	sc.Duration, sc.BaseRate, sc.PeakRate = 10, 20, 20 // 200 arrivals against 4/s of capacity
	m := startMock(t, endpoint(e, 0.05, 0))
	reg := prometheus.NewRegistry()
	res, err := loadgen.Load(context.Background(), loadgen.Config{Target: m.url + "/enrich", Schedule: sc,
		Arrivals: loadgen.ArrivalsUniform, TimeScale: 0.05, MaxInFlight: 5, LateThreshold: loadgen.DefaultLateThreshold,
		Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`
# HELP loadlab_load_dropped_total Arrivals not sent because the generator's in-flight cap was reached.
# TYPE loadlab_load_dropped_total counter
loadlab_load_dropped_total %d
# HELP loadlab_load_scheduled_total Arrivals the schedule called for.
# TYPE loadlab_load_scheduled_total counter
loadlab_load_scheduled_total 200
# HELP loadlab_load_sent_total Arrivals sent.
# TYPE loadlab_load_sent_total counter
loadlab_load_sent_total %d
`, res.Dropped, res.Requests)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loadlab_load_dropped_total",
		"loadlab_load_scheduled_total", "loadlab_load_sent_total"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
	if res.MaxInFlight != 5 || res.Client != string(loadgen.ClientFastHTTP) {
		t.Errorf("result says cap %d, client %q; want 5, fasthttp (the default)", res.MaxInFlight, res.Client)
	}
	if res.Dropped == 0 || res.Requests+res.Dropped+res.Behind != res.Scheduled || res.Scheduled != 200 {
		t.Errorf("scheduled %d = sent %d + dropped %d + behind %d? want 200 scheduled and drops reported",
			res.Scheduled, res.Requests, res.Dropped, res.Behind)
	}
	dropped := 0
	for _, s := range res.Timeline {
		dropped += s.Dropped
	}
	if dropped != res.Dropped {
		t.Errorf("timeline drops %d, total %d", dropped, res.Dropped)
	}
}

// lateClock is the wall clock, but wakes every sleeper 300 ms late, like a
// generator starved of CPU.
type lateClock struct{}

func (lateClock) Now() time.Time { return time.Now() }
func (lateClock) SleepUntil(ctx context.Context, t time.Time) error {
	return loadgen.RealClock.SleepUntil(ctx, t.Add(300*time.Millisecond))
}

// A generator that cannot keep its schedule (its sleeper wakes 300 ms late,
// past the 50 ms late threshold) sends nothing late: every arrival is
// behind, counted, and the schedule adds up.
func TestArrivalsReachedLateAreBehind(t *testing.T) {
	t.Parallel() // three arrivals
	sc, e := loadgen.OpeningRun()
	sc.Duration, sc.BaseRate, sc.PeakRate = 3, 1, 1
	m := startMock(t, endpoint(e, 0.5, 0))
	res, err := loadgen.Load(context.Background(), loadgen.Config{Target: m.url + "/enrich", Schedule: sc,
		Arrivals: loadgen.ArrivalsStep, TimeScale: 0.5, LateThreshold: 0.1, Clock: lateClock{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scheduled != 3 || res.Behind != 3 || res.Requests != 0 || res.Timeline[0].Behind != 1 {
		t.Errorf("scheduled %d, behind %d, sent %d; want all 3 behind", res.Scheduled, res.Behind, res.Requests)
	}
}

// schedule lists every arrival a pacer gives.
func schedule(p loadgen.Pacer) []time.Duration {
	var out []time.Duration
	for hit := 0; ; hit++ {
		off, ok := p.Due(hit)
		if !ok {
			return out
		}
		out = append(out, off)
	}
}

func TestRampPacer(t *testing.T) {
	sc := loadgen.OpeningSchedule()
	sc.Duration, sc.BaseRate, sc.PeakRate, sc.RampStart, sc.RampEnd = 3, 2, 4, 1, 2
	step := schedule(loadgen.RampPacer{Schedule: sc, Mode: loadgen.ArrivalsStep, Unit: time.Second})
	want := []time.Duration{0, 0, time.Second, time.Second, time.Second, time.Second, 2 * time.Second, 2 * time.Second}
	if !slices.Equal(step, want) {
		t.Errorf("step %v, want %v", step, want)
	}
	uni := schedule(loadgen.RampPacer{Schedule: sc, Mode: loadgen.ArrivalsUniform, Unit: time.Second})
	want = []time.Duration{0, 500 * time.Millisecond, time.Second, 1250 * time.Millisecond, 1500 * time.Millisecond,
		1750 * time.Millisecond, 2 * time.Second, 2500 * time.Millisecond}
	if !slices.Equal(uni, want) {
		t.Errorf("uniform %v, want %v", uni, want)
	}
}

// Against an endpoint without a request log, a request the client gave up
// on is timed_out: whether the server still did the work is unknown.
func TestForeignEndpointReportsTimedOut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(300 * time.Millisecond)
		}
	}))
	defer srv.Close()
	sc := loadgen.OpeningSchedule()
	sc.Duration, sc.BaseRate, sc.PeakRate, sc.Timeout = 3, 2, 2, 1
	res, err := loadgen.Load(context.Background(), loadgen.Config{Target: srv.URL + "/slow", Schedule: sc,
		Arrivals: loadgen.ArrivalsStep, TimeScale: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerJoined || res.TimedOut == 0 || res.TooLate != 0 {
		t.Errorf("joined %v, timed out %d, too late %d; want timed_out and no guesses", res.ServerJoined, res.TimedOut, res.TooLate)
	}
}

func TestLoadUnreachable(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	url := "http://" + ln.Addr().String() + "/enrich"
	ln.Close()
	_, err := loadgen.Load(context.Background(), loadgen.Config{Target: url, Schedule: loadgen.OpeningSchedule(),
		Arrivals: loadgen.ArrivalsStep, TimeScale: 0.1})
	if !errors.Is(err, loadgen.ErrTargetUnreachable) {
		t.Errorf("got %v, want ErrTargetUnreachable", err)
	}
}

// Over any ramp the pacer gives Rate(t) arrivals in second t, in order,
// whether the ramp ends inside the run or after it.
func TestRampPacerMatchesTheRate(t *testing.T) {
	for _, ch := range []func(*loadgen.Schedule){
		func(*loadgen.Schedule) {},
		func(s *loadgen.Schedule) { s.RampEnd = 90 },
		func(s *loadgen.Schedule) { s.RampStart, s.RampEnd = 70, 80 },
		func(s *loadgen.Schedule) { s.BaseRate = 0 },
		func(s *loadgen.Schedule) { s.PeakRate, s.BaseRate = 0, 3 },
	} {
		sc := loadgen.OpeningSchedule()
		ch(&sc)
		for _, mode := range []loadgen.Arrivals{loadgen.ArrivalsStep, loadgen.ArrivalsUniform} {
			per := make([]int, sc.Duration)
			prev := time.Duration(-1)
			for _, off := range schedule(loadgen.RampPacer{Schedule: sc, Mode: mode, Unit: time.Second}) {
				if off < prev {
					t.Fatalf("%+v %s: arrival at %v after one at %v", sc, mode, off, prev)
				}
				prev = off
				per[int(off/time.Second)]++
			}
			for s, n := range per {
				if n != sc.Rate(s) {
					t.Errorf("%+v %s: second %d has %d arrivals, rate %d", sc, mode, s, n, sc.Rate(s))
				}
			}
		}
	}
}
