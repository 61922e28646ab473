package loadgen

import (
	"context"
	"net/url"
	"testing"
	"time"
)

// stallClock wakes the pacer's first sleeper only after the run has ended,
// like a generator starved of CPU for the whole run.
type stallClock struct{}

func (c stallClock) Now() time.Time { return time.Now() }
func (c stallClock) SleepUntil(ctx context.Context, t time.Time) error {
	<-ctx.Done()
	return ctx.Err()
}

// Arrivals that fall due while the generator cannot send them are counted
// behind, never lost: scheduled = sent + dropped + behind, always.
func TestArrivalsTheGeneratorCouldNotSendAreBehind(t *testing.T) {
	sc := OpeningSchedule()
	sc.Duration, sc.BaseRate, sc.PeakRate = 2, 5, 5
	g := newGenerator(Config{Target: "http://127.0.0.1:1/", Schedule: sc, Arrivals: ArrivalsUniform, TimeScale: 0.01}, stallClock{})
	u, _ := url.Parse(g.cfg.Target)
	g.client = newFastHTTP(u, RealClock)
	defer g.client.close()
	g.start = time.Now()
	g.end = g.start.Add(2 * g.unit)
	ctx, cancel := context.WithDeadline(context.Background(), g.end)
	defer cancel()
	g.runOpen(ctx, RampPacer{Schedule: sc, Mode: ArrivalsUniform, Unit: g.unit})
	if g.behind != 10 || g.sent != 0 {
		t.Errorf("behind %d, sent %d; want all 10 arrivals behind", g.behind, g.sent)
	}
}
