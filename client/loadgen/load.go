package loadgen

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice/api"
)

// ErrTargetUnreachable: the target did not answer before any load was sent.
var ErrTargetUnreachable = errors.New("loadgen: target unreachable")

// Bounds of the calls around the run.
const (
	probeTimeout    = 5 * time.Second
	capacityTimeout = 2 * time.Second
)

// Load runs the generator against cfg.Target and joins the outcomes with
// the server's request log when the target has one.
func Load(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, fmt.Errorf("loadgen: %w", err)
	}
	g := &generator{cfg: cfg, clock: cfg.Clock, replies: map[Reply]int{},
		unit: time.Duration(float64(time.Second) * cfg.TimeScale), metrics: newMetrics(cfg.Registerer)}
	if g.clock == nil {
		g.clock = RealClock
	}
	conns := cfg.MaxInFlight
	if conns == 0 {
		conns = defaultConns
	}
	g.http = transport.New(conns)
	defer g.http.CloseIdleConnections()
	base := baseURL(cfg.Target)
	mock := api.Client{BaseURL: base, Token: cfg.AdminToken, HTTP: g.http}
	if err := (api.Client{BaseURL: base, HTTP: g.http, Timeout: probeTimeout}).Answers(ctx); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrTargetUnreachable, err)
	}
	station := stationOf(cfg.Target)
	hasLog := mock.Reset(ctx) == nil && station != ""

	g.start = g.clock.Now().Add(g.unit / 10) // a moment to start the goroutines
	g.end = g.start.Add(time.Duration(cfg.Scenario.Duration) * g.unit)
	runCtx, stop := context.WithDeadline(ctx, g.end)
	defer stop()
	queue := make([]int, cfg.Scenario.Duration)
	for i := range queue {
		queue[i] = -1
	}
	var wg sync.WaitGroup
	if station != "" {
		wg.Go(func() { g.sampleQueue(runCtx, mock, station, queue) })
	}
	if cfg.Progress != nil {
		wg.Go(func() { g.progress(runCtx) })
	}
	if cfg.Scenario.Generator == models.GeneratorOpen {
		g.runOpen(runCtx, &wg, RampPacer{Scenario: cfg.Scenario, Mode: cfg.Arrivals, Unit: g.unit})
	} else {
		g.runClosed(runCtx, &wg)
	}
	wg.Wait()

	in := g.joinInput(queue)
	if hasLog {
		t0 := time.Now()
		snap, err := mock.RequestLog(context.WithoutCancel(ctx))
		t1 := time.Now()
		if err == nil {
			in.log = &snap
			in.offset = snap.Now.Sub(t0.Add(t1.Sub(t0) / 2))
		}
	}
	if station != "" {
		in.queueCap = queueCapacity(context.WithoutCancel(ctx), mock, station)
	}
	return join(in), nil
}

// joinInput copies the generator's records once every sender has finished.
func (g *generator) joinInput(queue []int) joinInput {
	g.mu.Lock()
	defer g.mu.Unlock()
	reqs := make([]request, len(g.reqs))
	for i, q := range g.reqs {
		reqs[i] = *q
	}
	return joinInput{start: g.start, end: g.end, unit: g.unit, seconds: g.cfg.Scenario.Duration,
		requests: reqs, dropped: g.dropped, late: g.late, maxLag: g.maxLag, queue: queue, queueCap: -1,
		tieWindow: g.cfg.TieWindow, timeScale: g.cfg.TimeScale}
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
		p := Progress{Elapsed: float64(t), Duration: float64(g.cfg.Scenario.Duration),
			Sent: len(g.reqs), Dropped: len(g.dropped), Replies: maps.Clone(g.replies)}
		g.mu.Unlock()
		g.cfg.Progress(p)
	}
}
