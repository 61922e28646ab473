package loadgen

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/mockservice/api"
)

// Errors Load returns before any load is sent.
var (
	// ErrTargetUnreachable: the target did not accept a connection, or
	// did not answer HTTP (it is api.ErrUnreachable).
	ErrTargetUnreachable = api.ErrUnreachable
	// ErrTimeScaleMismatch: the target is a loadlab mock service running
	// at another time scale; every figure would be wrong.
	ErrTimeScaleMismatch = errors.New("loadgen: time scale mismatch")
	// ErrAdmin: the mock service refused its reset (for want of its admin
	// token, say); nothing was sent. Load returns it within a *field.Error
	// of admin_token.
	ErrAdmin = errors.New("loadgen: the mock service refused its reset")
)

// capacityTimeout bounds the read of the station's queue capacity.
const capacityTimeout = 2 * time.Second

// Load runs the generator against cfg.Target. When the target identifies
// itself as a loadlab mock service (OPTIONS on the target's path), Load
// resets it first, samples its queue, and joins the outcomes with its
// request log; otherwise it sends the load and nothing else, and the result
// says so (ServerIdentified false). When ctx ends before the run does, the
// result holds what was measured and is marked Partial.
//
// With cfg.Segment i/n, Load sends only its part of the schedule from
// cfg.StartAt; only segment 0 resets the mock service, each segment joins
// its own requests with the shared request log, and loadresult.Merge
// combines the n results into the whole schedule's.
func Load(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, fmt.Errorf("loadgen: %w", err)
	}
	clock := cfg.Clock
	if clock == nil {
		clock = RealClock
	}
	g := newGenerator(cfg, clock)
	u, _ := url.Parse(cfg.Target) // valid: checked by Validate
	if cfg.Client == ClientNetHTTP {
		g.client = newNetHTTP(u, g.inFlightCap, clock, cfg.Dial)
	} else {
		g.client = newFastHTTP(u, clock)
	}
	defer g.client.close()
	tg, err := identify(ctx, cfg, u)
	if err != nil {
		return Result{}, err
	}
	if err := g.prepare(ctx, tg); err != nil {
		return Result{}, err
	}
	queue := g.run(ctx, tg)
	res := join(g.joinInput(ctx, tg, queue))
	res.Client, res.MaxInFlight = cfg.clientName(), g.inFlightCap
	res.Scenario = Scenario{Endpoint: cfg.Endpoint, Schedule: cfg.Schedule}
	res.Arrivals, res.Target, res.StartAt = cfg.Arrivals, cfg.Target, g.start
	if !cfg.Segment.whole() {
		seg := cfg.Segment
		res.Segment = &seg
	}
	return res, nil
}

// target is what Load learned of its target before sending anything.
type target struct {
	// mock is the mock service's admin client, on connections of its own.
	mock api.Client
	// identified is the mock service's identity; nil: not a mock service.
	identified *api.Identity
	// station is the mock station behind the target's path, whose queue
	// is sampled and whose request log is joined; "" when there is none.
	station string
}

// hasLog reports whether the target keeps a request log to join with.
func (t target) hasLog() bool { return t.station != "" }

// identify asks the target whether it is a loadlab mock service at the
// run's time scale. The mock service's base is the target without its
// station's path, so that an instance of several (/i/k/enrich) is reset,
// sampled and joined at /i/k.
func identify(ctx context.Context, cfg Config, u *url.URL) (target, error) {
	base, station, idPath := u.Scheme+"://"+u.Host, stationOf(u.Path), u.EscapedPath()
	for _, p := range []string{api.PathEnrich, api.PathRecords} {
		if prefix, ok := strings.CutSuffix(u.Path, p); ok && prefix != "" {
			base, station, idPath = base+prefix, stationOf(p), p
		}
	}
	mock := api.Client{BaseURL: base, Token: cfg.AdminToken, HTTP: transport.NewDial(2, cfg.Dial), Dial: cfg.Dial}
	identified, err := mock.DiscoverWait(ctx, idPath, cfg.Wait)
	if err != nil {
		return target{}, fmt.Errorf("loadgen: %w", err)
	}
	if identified == nil {
		station = ""
	} else if identified.TimeScale != cfg.TimeScale {
		return target{}, fmt.Errorf("%w: the mock service at %s runs at time scale %g, this run at %g",
			ErrTimeScaleMismatch, base, identified.TimeScale, cfg.TimeScale)
	}
	return target{mock: mock, identified: identified, station: station}, nil
}

// prepare resets the mock service (segment 0 only) and sets the run's
// start and end. Segments share the target: segment 0 alone resets it,
// before the common start, and one that comes after the start must not
// reset what the others have sent; any generator ready only after the
// start sends nothing.
func (g *generator) prepare(ctx context.Context, tg target) error {
	startAt, reset := g.cfg.StartAt, tg.hasLog() && g.cfg.Segment.Index == 0
	if !startAt.IsZero() && g.clock.Now().After(startAt) {
		return fmt.Errorf("%w: the generator was ready at %s, %v after the start at %s: nothing sent, nothing reset",
			ErrStartPassed, stamp(g.clock.Now()), g.clock.Now().Sub(startAt).Round(time.Millisecond), stamp(startAt))
	}
	if reset {
		if err := tg.mock.Reset(ctx); err != nil {
			return fmt.Errorf("%w: %w", ErrAdmin, err)
		}
	}
	g.start = g.clock.Now().Add(g.unit / 10) // a moment to start the goroutines
	if !startAt.IsZero() {
		if now := g.clock.Now(); now.After(startAt) {
			what := "identified the target"
			if reset {
				what = "identified and reset the target"
			}
			return fmt.Errorf("%w: the generator %s at %s, %v after the start at %s: nothing sent",
				ErrStartPassed, what, stamp(now), now.Sub(startAt).Round(time.Millisecond), stamp(startAt))
		}
		g.start = startAt
	}
	g.end = g.start.Add(time.Duration(g.cfg.Duration) * g.unit)
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// run sends the schedule until the run's end (or ctx's), sampling the
// station's queue and reporting progress meanwhile, and returns the queue
// samples: one per model second, -1 where none was read.
func (g *generator) run(ctx context.Context, tg target) []int {
	runCtx, stop := context.WithDeadline(ctx, g.end)
	defer stop()
	queue := make([]int, g.cfg.Duration)
	for i := range queue {
		queue[i] = -1
	}
	var wg sync.WaitGroup
	if tg.station != "" {
		wg.Go(func() { g.sampleQueue(runCtx, tg.mock, tg.station, queue) })
	}
	if g.cfg.Progress != nil {
		wg.Go(func() { g.progress(runCtx) })
	}
	if g.cfg.Mode == Open {
		g.runOpen(runCtx, RampPacer{Schedule: g.cfg.Schedule, Mode: g.cfg.Arrivals, Unit: g.unit})
	} else {
		g.runClosed(runCtx)
	}
	wg.Wait()
	return queue
}

// joinInput gathers what the join reads: the generator's tally, the
// queue samples, and the mock service's request log and metrics, read
// (bounded) even when ctx has ended.
func (g *generator) joinInput(ctx context.Context, tg target, queue []int) joinInput {
	after := context.WithoutCancel(ctx)
	in := joinInput{tally: g.tally(), start: g.start, end: g.end, unit: g.unit, queue: queue, queueCap: -1,
		identified: tg.identified != nil, tieWindow: g.cfg.TieWindow, timeScale: g.cfg.TimeScale}
	switch {
	case tg.hasLog() && len(in.joinable) == 0:
		in.log = &api.RequestLogSnapshot{} // every outcome is settled: nothing to ask the log
	case tg.hasLog():
		t0 := time.Now()
		snap, err := tg.mock.RequestLog(after)
		t1 := time.Now()
		if err != nil {
			in.logError = err.Error()
		} else {
			in.log = &snap
			in.offset = snap.Now.Sub(t0.Add(t1.Sub(t0) / 2))
		}
	}
	if tg.station != "" {
		in.queueCap = queueCapacity(after, tg.mock, tg.station)
		if st, err := tg.mock.Scrape(after); err == nil {
			hw := st.Stations[tg.station].HighWater.Queue
			in.queueHighWater = &hw
		}
	}
	if ctx.Err() != nil { // interrupted: the timeline ends where the run did
		in.seconds = min(g.second(g.clock.Now())+1, len(in.timeline))
		in.partial = true
	}
	return in
}

// tally copies what the generator counted, once every sender has finished.
func (g *generator) tally() tally {
	g.mu.Lock()
	defer g.mu.Unlock()
	return tally{sent: g.sent, dropped: g.dropped, behind: g.behind, late: g.late, senders: g.senders, maxLag: g.maxLag, replies: maps.Clone(g.replies),
		statuses: maps.Clone(g.statuses), timeline: g.timeline, joinable: g.joinable, overflow: maps.Clone(g.overflow),
		fromSchedule: g.fromSchedule, fromSend: g.fromSend}
}

// queueCapacity reads the station's queue capacity from its metrics; -1
// when they cannot be read.
func queueCapacity(ctx context.Context, mock api.Client, station string) int {
	mock.Timeout = capacityTimeout
	st, err := mock.Scrape(ctx)
	if err != nil {
		return -1
	}
	return st.Stations[station].QueueCapacity
}

// sampleQueue reads the station's queue length in the middle of every model
// second.
func (g *generator) sampleQueue(ctx context.Context, mock api.Client, station string, samples []int) {
	mock.Timeout = g.unit / 2
	for t := range samples {
		at := g.start.Add(time.Duration(t)*g.unit + g.unit/2)
		if g.clock.SleepUntil(ctx, at) != nil {
			return
		}
		if st, err := mock.Scrape(ctx); err == nil {
			samples[t] = st.Stations[station].QueueLength
		}
	}
}

// progress reports the run's state about every model second.
func (g *generator) progress(ctx context.Context) {
	for t := 1; ; t++ {
		if g.clock.SleepUntil(ctx, g.start.Add(time.Duration(t)*g.unit)) != nil {
			return
		}
		g.mu.Lock()
		p := Progress{Elapsed: float64(t), Duration: float64(g.cfg.Duration),
			Sent: g.sent, Dropped: g.dropped, Behind: g.behind, Replies: maps.Clone(g.replies), Latency: summarise(g.fromSchedule, g.unit)}
		g.mu.Unlock()
		g.cfg.Progress(p)
	}
}
