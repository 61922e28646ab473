package budgets

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/mockservice/mocktest"
)

// Vegas's update, as Netflix's VegasLimit publishes it, on synthetic
// windows: no sleeps, no clock.
func TestVegasUpdateRule(t *testing.T) {
	v := Vegas{Initial: 6, Floor: 1, Ceiling: 12, Alpha: 1, Beta: 1, Threshold: 0, Window: 10, Probe: 30}
	ms := time.Millisecond
	s := VegasState{Limit: 6}
	for i, step := range []struct {
		w          VegasWindow
		limit      float64
		noLoad     time.Duration
		why        string
		windowsNow int
	}{
		{VegasWindow{RTT: 30 * ms, MaxInFlight: 6}, 6, 30 * ms, "the first RTT is the no-load RTT, limit kept", 1},
		{VegasWindow{RTT: 30 * ms, MaxInFlight: 6}, 7, 30 * ms, "queue ⌈6 × 0⌉ = 0 ≤ threshold 0: + beta", 2},
		{VegasWindow{RTT: 34 * ms, MaxInFlight: 7}, 7, 30 * ms, "queue ⌈7 × (1 − 30/34)⌉ = 1, in [alpha, beta]: kept", 3},
		{VegasWindow{RTT: 40 * ms, MaxInFlight: 7}, 6, 30 * ms, "queue ⌈7 × 0.25⌉ = 2 > beta: − log10 = 1", 4},
		{VegasWindow{RTT: 31 * ms, MaxInFlight: 2}, 6, 30 * ms, "2 × 2 < 6 in flight: not in use, kept", 5},
		{VegasWindow{RTT: 25 * ms, MaxInFlight: 6}, 6, 25 * ms, "a lower RTT only becomes the no-load RTT", 6},
		{VegasWindow{RTT: 26 * ms, MaxInFlight: 6, Dropped: true}, 5, 25 * ms, "a drop: − 1 whatever the queue", 7},
		{VegasWindow{Dropped: true, MaxInFlight: 5}, 4, 25 * ms, "every call dropped (no RTT): − 1", 8},
		{VegasWindow{MaxInFlight: 4}, 4, 25 * ms, "no call judged by its RTT, none dropped: kept", 9},
	} {
		s = v.Update(s, step.w)
		if s.Limit != step.limit || s.NoLoad != step.noLoad || s.Windows != step.windowsNow {
			t.Fatalf("step %d (%s): %+v; want limit %v, no-load %v, %d windows", i, step.why, s, step.limit, step.noLoad, step.windowsNow)
		}
	}
	// Netflix's alpha 3, beta 6, threshold 1 at a limit under 100, log10 2
	// from 100: grows by beta on an empty queue, by log10 below alpha,
	// shrinks by log10 above beta, and the ceiling and floor hold.
	n := Vegas{Initial: 20, Floor: 2, Ceiling: 200, Alpha: 3, Beta: 6, Threshold: 1, Window: 10, Probe: 30}
	for i, c := range []struct {
		limit   float64
		rtt     time.Duration
		dropped bool
		want    float64
	}{
		{20, 100 * ms, false, 26},   // queue 0
		{20, 105 * ms, false, 26},   // ⌈20 × 0.048⌉ = 1 ≤ threshold
		{20, 110 * ms, false, 21},   // ⌈1.82⌉ = 2 < alpha
		{20, 120 * ms, false, 20},   // ⌈3.33⌉ = 4 in [3, 6]
		{20, 150 * ms, false, 19},   // ⌈6.67⌉ = 7 > beta
		{150, 110 * ms, false, 148}, // ⌈13.6⌉ = 14 > 6: − ⌊log10 150⌋ = 2
		{198, 100 * ms, false, 200}, // + 6, held at the ceiling
		{2, 300 * ms, true, 2},      // a drop, held at the floor
	} {
		got := n.Update(VegasState{Limit: c.limit, NoLoad: 100 * ms, Windows: 1}, VegasWindow{RTT: c.rtt, MaxInFlight: int(c.limit), Dropped: c.dropped})
		if got.Limit != c.want {
			t.Errorf("case %d: limit %v, RTT %v: %v, want %v", i, c.limit, c.rtt, got.Limit, c.want)
		}
	}
	// The probe: after Probe × limit windows the next RTT is the no-load
	// RTT again, even a higher one, and the limit is kept.
	p := Vegas{Initial: 2, Floor: 1, Ceiling: 4, Alpha: 1, Beta: 1, Window: 1, Probe: 2}
	ps := VegasState{Limit: 2, NoLoad: 10 * ms, Windows: 3}
	ps = p.Update(ps, VegasWindow{RTT: 50 * ms, MaxInFlight: 2})
	if ps.NoLoad != 50*ms || ps.Limit != 2 || ps.Windows != 0 {
		t.Errorf("probe after 2 × 2 windows: %+v", ps)
	}
}

// The running rule gathers Window calls into one window: the mean RTT of
// the undropped ones, the most in flight, any drop.
func TestVegasWindows(t *testing.T) {
	v := Vegas{Initial: 4, Floor: 1, Ceiling: 8, Alpha: 1, Beta: 1, Window: 3, Probe: 30}
	r := v.rule()
	ms := time.Millisecond
	steps := []struct {
		o    Outcome
		want int
	}{
		{Outcome{InFlight: 4, RTT: 10 * ms}, 4},
		{Outcome{InFlight: 2, RTT: 20 * ms}, 4},
		{Outcome{InFlight: 3, RTT: 30 * ms}, 4}, // window 1: mean 20 ms is the no-load RTT
		{Outcome{InFlight: 4, RTT: 20 * ms}, 4},
		{Outcome{InFlight: 4, RTT: 20 * ms}, 4},
		{Outcome{InFlight: 4, RTT: 20 * ms}, 5}, // window 2: queue 0, + beta
		{Outcome{InFlight: 5, Dropped: true}, 5},
		{Outcome{InFlight: 5, RTT: 20 * ms}, 5},
		{Outcome{InFlight: 5, RTT: 20 * ms}, 4}, // window 3: a drop, − 1
	}
	for i, s := range steps {
		if got := r.next(0, s.o); got != s.want {
			t.Fatalf("call %d: limit %d, want %d", i, got, s.want)
		}
	}
	for _, tc := range []struct {
		v    Vegas
		want string
	}{
		{Vegas{Initial: 1, Floor: 0, Ceiling: 2, Window: 1, Probe: 1}, "floor: 0 must be ≥ 1"},
		{Vegas{Initial: 3, Floor: 3, Ceiling: 2, Window: 1, Probe: 1}, "ceiling: 2 must be ≥ the floor, 3"},
		{Vegas{Initial: 3, Floor: 1, Ceiling: 2, Window: 1, Probe: 1}, "initial: 3 must be in [floor 1, ceiling 2]"},
		{Vegas{Initial: 1, Floor: 1, Ceiling: 2, Alpha: 2, Beta: 1, Window: 1, Probe: 1}, "beta: 1 must be ≥ alpha, 2"},
		{Vegas{Initial: 1, Floor: 1, Ceiling: 2, Alpha: 1, Beta: 1, Threshold: 2, Window: 1, Probe: 1}, "threshold: 2 must be in [0, alpha 1]"},
		{Vegas{Initial: 1, Floor: 1, Ceiling: 2, Probe: 1}, "window: 0 must be ≥ 1 call"},
		{Vegas{Initial: 1, Floor: 1, Ceiling: 2, Window: 1}, "probe: 0 must be ≥ 1"},
	} {
		if _, err := NewAdaptive(tc.v); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.v, err, tc.want)
		}
	}
}

// recordRule keeps the outcomes it is told and never moves the limit.
type recordRule struct {
	mu  sync.Mutex
	got []Outcome
}

func (r *recordRule) next(limit int, o Outcome) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, o)
	return limit
}

// The RTT an adaptive budget reports is the time from the request written
// to the first response byte of a real HTTP call: not the permit wait, not
// the time the caller then spends reading the body. Drops carry no RTT.
//
// On a fake clock over the in-memory wire (a real net/http server and
// client): the RTT is the server's 40 ms exactly, whatever the machine.
func TestAdaptiveRTTIsWriteToFirstByte(t *testing.T) {
	synctest.Test(t, testAdaptiveRTT)
}

func testAdaptiveRTT(t *testing.T) {
	const serve = 40 * time.Millisecond
	url, dial := mocktest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(serve)
		if strings.HasSuffix(r.URL.Path, "/busy") {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	client := &http.Client{Transport: &http.Transport{DialContext: dial}}
	defer client.CloseIdleConnections()
	rec := &recordRule{}
	ad := &Adaptive{alg: Vegas{Initial: 1, Floor: 1, Ceiling: 1, Window: 1, Probe: 1}, rule: rec, limit: 1}
	b, err := New("d", Config{Limiter: ad, PermitTimeout: 5 * time.Second, CallTimeout: 5 * time.Second}, NewMetrics(nil))
	if err != nil {
		t.Fatal(err)
	}
	call := func(path string, after time.Duration) Call {
		return func(ctx context.Context) (int, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+path, nil)
			resp, err := client.Do(req)
			if err != nil {
				return 0, err
			}
			resp.Body.Close()
			time.Sleep(after) // the caller's own work after the answer
			return resp.StatusCode, nil
		}
	}
	// The first call holds the only permit while the second waits for it.
	done := make(chan Result, 1)
	go func() { done <- b.Do(context.Background(), "d", call("/ok", 100*time.Millisecond)) }()
	for ad.InUse() != 1 {
		time.Sleep(time.Millisecond)
	}
	second := b.Do(context.Background(), "d", call("/ok", 0))
	first := <-done
	b.Do(context.Background(), "d", call("/busy", 0))
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.got) != 3 {
		t.Fatalf("outcomes %+v", rec.got)
	}
	for i, res := range []Result{first, second} {
		o := rec.got[i]
		if o.Dropped || o.RTT != serve {
			t.Errorf("call %d: outcome %+v; want an RTT of the server's %v, not its call latency %v or permit wait %v",
				i, o, serve, res.Latency, res.PermitWait)
		}
	}
	if second.PermitWait < 100*time.Millisecond {
		t.Errorf("the second call waited %v for its permit; the test wants it to wait", second.PermitWait)
	}
	if o := rec.got[2]; !o.Dropped || o.RTT != 0 {
		t.Errorf("a 503: %+v, want a drop without an RTT", o)
	}
	// An algorithm that reads no RTT (AIMD) is not traced: its outcomes
	// carry the call's own time, the caller's work after the answer
	// included.
	aimdRec := &recordRule{}
	aimd := &Adaptive{alg: AIMD{Initial: 1, Floor: 1, Ceiling: 1, Backoff: 0.5}, rule: aimdRec, limit: 1}
	ab, err := New("a", Config{Limiter: aimd, PermitTimeout: 5 * time.Second, CallTimeout: 5 * time.Second}, NewMetrics(nil))
	if err != nil {
		t.Fatal(err)
	}
	res := ab.Do(context.Background(), "a", call("/ok", 100*time.Millisecond))
	aimdRec.mu.Lock()
	defer aimdRec.mu.Unlock()
	if len(aimdRec.got) != 1 || aimdRec.got[0].RTT != res.Latency || res.Latency < serve+100*time.Millisecond {
		t.Errorf("AIMD outcomes %+v after a call of %v; want one whose RTT is the call's time", aimdRec.got, res.Latency)
	}
}
