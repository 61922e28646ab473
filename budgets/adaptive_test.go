package budgets

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The AIMD rule as Netflix's AIMDLimit publishes it, on synthetic
// outcomes: +1 while the limit is in use (in flight × 2 ≥ limit), nothing
// while it is not, ⌊× backoff⌋ on a drop, within [floor, ceiling].
func TestAIMDUpdateRule(t *testing.T) {
	a := AIMD{Initial: 6, Floor: 2, Ceiling: 12, Backoff: 0.9}
	steps := []struct {
		inFlight int
		dropped  bool
		want     int
	}{
		{6, false, 7},   // in use: +1
		{3, false, 7},   // 3×2 < 7: not in use, unchanged
		{4, false, 8},   // 4×2 ≥ 7
		{8, true, 7},    // ⌊8 × 0.9⌋ = 7
		{7, true, 6},    // ⌊6.3⌋
		{6, true, 5},    // ⌊5.4⌋
		{5, true, 4},    // ⌊4.5⌋
		{4, true, 3},    // ⌊3.6⌋
		{3, true, 2},    // ⌊2.7⌋
		{2, true, 2},    // ⌊1.8⌋ = 1, held at the floor
		{12, false, 3},  // in use again
		{100, false, 4}, // more in flight than the limit (it fell): still +1
	}
	limit := a.Initial
	for i, s := range steps {
		limit = a.Update(limit, s.inFlight, s.dropped)
		if limit != s.want {
			t.Fatalf("step %d (%d in flight, dropped %v): limit %d, want %d", i, s.inFlight, s.dropped, limit, s.want)
		}
	}
	limit = 12
	if got := a.Update(limit, 12, false); got != 12 {
		t.Errorf("at the ceiling: %d", got)
	}
	for _, tc := range []struct {
		a    AIMD
		want string
	}{
		{AIMD{Initial: 1, Floor: 0, Ceiling: 4, Backoff: 0.9}, "floor: 0 must be ≥ 1"},
		{AIMD{Initial: 3, Floor: 3, Ceiling: 2, Backoff: 0.9}, "ceiling: 2 must be ≥ the floor, 3"},
		{AIMD{Initial: 5, Floor: 1, Ceiling: 4, Backoff: 0.9}, "initial: 5 must be in [floor 1, ceiling 4]"},
		{AIMD{Initial: 2, Floor: 1, Ceiling: 4, Backoff: 1}, "backoff: 1 must be in (0, 1)"},
		{AIMD{Initial: 2, Floor: 1, Ceiling: 4, Backoff: 0}, "backoff: 0 must be in (0, 1)"},
	} {
		if _, err := NewAdaptive(tc.a); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.a, err, tc.want)
		}
	}
}

// A budget with an adaptive limit admits at most the current limit, lets
// waiters in first come first served as calls end, lowers the limit on
// rejections and call timeouts, and raises it on successes in use; the
// gauge follows.
func TestAdaptiveBudget(t *testing.T) {
	ad, err := NewAdaptive(AIMD{Initial: 2, Floor: 1, Ceiling: 4, Backoff: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics(nil)
	b, err := New("records", Config{Limiter: ad, PermitTimeout: time.Second, CallTimeout: 50 * time.Millisecond}, m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New("x", Config{Limiter: &Adaptive{}, PermitTimeout: time.Second, CallTimeout: time.Second}, m); err == nil ||
		!strings.Contains(err.Error(), "adaptive: an Adaptive with no algorithm") {
		t.Errorf("the zero Adaptive: %v", err)
	}
	// Two calls hold both permits; a third waits until one ends.
	release := make(chan struct{})
	var wg sync.WaitGroup
	started := make(chan struct{}, 3)
	for range 2 {
		wg.Go(func() {
			b.Do(context.Background(), "records", func(ctx context.Context) (int, error) {
				started <- struct{}{}
				<-release
				return 200, nil
			})
		})
	}
	<-started
	<-started
	if ad.InUse() != 2 {
		t.Fatalf("in use %d", ad.InUse())
	}
	third := make(chan Result, 1)
	go func() {
		third <- b.Do(context.Background(), "records", func(context.Context) (int, error) { return 503, nil })
	}()
	select {
	case <-third:
		t.Fatal("a third call ran past a limit of 2")
	case <-time.After(30 * time.Millisecond):
	}
	close(release)
	wg.Wait()
	if r := <-third; r.Class != Rejected {
		t.Fatalf("third call %+v", r)
	}
	// One call at a time, on a fresh limit of 2 (each sent with 1 in flight).
	ad, _ = NewAdaptive(AIMD{Initial: 2, Floor: 1, Ceiling: 4, Backoff: 0.5})
	b, _ = New("records", Config{Limiter: ad, PermitTimeout: time.Second, CallTimeout: 50 * time.Millisecond}, m)
	status := func(code int) Call { return func(context.Context) (int, error) { return code, nil } }
	timeout := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }
	for i, step := range []struct {
		call Call
		want int
	}{
		{status(200), 3}, // 1 × 2 ≥ 2: in use, +1
		{status(200), 3}, // 1 × 2 < 3: not in use
		{status(503), 1}, // a rejection: ⌊3 × 0.5⌋
		{timeout, 1},     // a call timeout is a drop: ⌊0.5⌋, held at the floor
		{status(200), 2}, // in use again
	} {
		b.Do(context.Background(), "records", step.call)
		if got := ad.Limit(); got != step.want {
			t.Fatalf("step %d: limit %d, want %d", i, got, step.want)
		}
	}
	if g := testutil.ToFloat64(m.limit.WithLabelValues("records")); g != 2 {
		t.Errorf("gauge loadlab_client_limit %v, limit 2", g)
	}
	snap := m.Snapshot()["records"]
	if snap.Calls[CallTimeout] != 1 {
		t.Errorf("calls %v", snap.Calls)
	}
	// An interrupted call does not move it.
	ctx, cancel := context.WithCancel(context.Background())
	b.Do(ctx, "records", func(ctx context.Context) (int, error) { cancel(); return 0, errors.New("gone") })
	if ad.Limit() != 2 || ad.InUse() != 0 {
		t.Errorf("after an interrupted call: limit %d, in use %d", ad.Limit(), ad.InUse())
	}
}

// A waiter whose permit timeout passes leaves the queue and holds nothing;
// the permit count stays exact under concurrent use.
func TestAdaptiveWaitersLeave(t *testing.T) {
	ad, _ := NewAdaptive(AIMD{Initial: 1, Floor: 1, Ceiling: 1, Backoff: 0.9})
	m := NewMetrics(nil)
	b, err := New("e", Config{Limiter: ad, PermitTimeout: 20 * time.Millisecond, CallTimeout: time.Second}, m)
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	go b.Do(context.Background(), "e", func(context.Context) (int, error) { <-hold; return 200, nil })
	for ad.InUse() != 1 {
		time.Sleep(time.Millisecond)
	}
	if r := b.Do(context.Background(), "e", func(context.Context) (int, error) { return 200, nil }); r.Class != PermitTimeout {
		t.Errorf("waiter past its permit timeout: %s", r.Class)
	}
	close(hold)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { b.Do(context.Background(), "e", func(context.Context) (int, error) { return 200, nil }) })
	}
	wg.Wait()
	if ad.InUse() != 0 || len(ad.waiters) != 0 {
		t.Errorf("in use %d, waiters %d", ad.InUse(), len(ad.waiters))
	}
}

// Only a limit that moves has the gauge loadlab_client_limit: a budget with
// a pool of its own, a shared pool or no limiter has no series of it. An
// Adaptive given to two budgets is one limit, and both their gauges follow
// it.
func TestLimitGaugeOnlyForMovingLimits(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	ok := func(context.Context) (int, error) { return 200, nil }
	for name, lim := range map[string]Limiter{"fixed": Fixed(3), "pool": NewPool(2), "none": nil} {
		b, err := New(name, Config{Limiter: lim, PermitTimeout: time.Second, CallTimeout: time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		b.Do(context.Background(), name, ok)
	}
	ad, err := NewAdaptive(AIMD{Initial: 4, Floor: 1, Ceiling: 4, Backoff: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	var shared []*Budget
	for _, name := range []string{"a1", "a2"} {
		b, err := New(name, Config{Limiter: ad, PermitTimeout: time.Second, CallTimeout: time.Second}, m)
		if err != nil {
			t.Fatal(err)
		}
		shared = append(shared, b)
	}
	shared[0].Do(context.Background(), "a1", func(context.Context) (int, error) { return 503, nil }) // ⌊4 × 0.5⌋
	want := `
# HELP loadlab_client_limit The adaptive concurrency limit now, per dependency with one (strategy C5).
# TYPE loadlab_client_limit gauge
loadlab_client_limit{dependency="a1"} 2
loadlab_client_limit{dependency="a2"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loadlab_client_limit"); err != nil {
		t.Error(err)
	}
}
