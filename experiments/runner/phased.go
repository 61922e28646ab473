package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/loadlab/loadlab/client/faults"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// startLead is how far ahead of now a phased run's clock is set to start:
// time for the child to start, enter its CPU limit and identify the mock
// service, so that the runner and the child share the start.
const startLead = 1500 * time.Millisecond

// restartWait bounds the wait for a restarted mock service to answer.
const restartWait = 30 * time.Second

// phaseDriver makes a phased run's changes at their times.
type phaseDriver struct {
	restarter Restarter // nil: a restart fails
	mock      api.Client
	scen      phases.PhasedScenario
	scale     float64
	start     time.Time
	proxies   *faults.Proxies
	// apply makes phase i's settings (its Set) where they go: the mock
	// service's, or the copies'.
	apply  func(ctx context.Context, i int) error
	seed   uint32
	mu     sync.Mutex
	events []resultsfile.PhaseEvent
}

func (d *phaseDriver) lab(t time.Time) float64 { return t.Sub(d.start).Seconds() / d.scale }

func (d *phaseDriver) real(lab time.Duration) time.Time {
	return d.start.Add(time.Duration(float64(lab) * d.scale))
}

// wait sleeps until t or until ctx ends (false).
func wait(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func (d *phaseDriver) record(phase string, action resultsfile.PhaseAction, scheduled time.Duration, at time.Time, err error, note ...string) {
	ev := resultsfile.PhaseEvent{Phase: phase, Action: action, Scheduled: scheduled.Seconds(), At: d.lab(at), Done: d.lab(time.Now()), Note: strings.Join(note, "")}
	if err != nil {
		ev.Err = err.Error()
	}
	d.mu.Lock()
	d.events = append(d.events, ev)
	d.mu.Unlock()
}

// prepare applies the first phase's settings before the run starts (its
// faults are the proxies' from their start).
func (d *phaseDriver) prepare(ctx context.Context) error {
	return d.set(ctx, 0)
}

// set makes phase i's settings, if it has any.
func (d *phaseDriver) set(ctx context.Context, i int) error {
	if len(d.scen.Phases[i].Set) == 0 {
		return nil
	}
	return d.apply(ctx, i)
}

// patchMock sends phase i's settings to the mock service.
func (d *phaseDriver) patchMock(ctx context.Context, i int) error {
	body, err := d.scen.Phases[i].PatchBody()
	if err != nil {
		return err
	}
	return d.mock.PatchConfig(ctx, json.RawMessage(body))
}

// begin sets the run's start startLead ahead and gives the child its
// phases, and the duration they add up to where the run has none.
func (d *phaseDriver) begin(run *records.Config) {
	// The schedule keeps the monotonic clock; the child gets the same
	// instant by the wall clock.
	d.start = time.Now().Add(startLead)
	run.Phases, run.StartAt = d.scen.RunPhases(), d.start.Round(0)
	if run.Duration == 0 {
		run.Duration = d.scen.Total()
	}
}

// run makes the changes of phases 1.. at their boundaries, and any
// restart, until the phases end or ctx does.
func (d *phaseDriver) run(ctx context.Context) {
	for i, ph := range d.scen.Phases {
		at := d.scen.Start(i)
		if i > 0 {
			if !wait(ctx, d.real(at)) {
				return
			}
			t := time.Now()
			if len(ph.Set) > 0 {
				d.record(ph.Name, resultsfile.ActionSet, at, t, d.set(ctx, i))
			}
			if d.proxies != nil {
				d.record(ph.Name, resultsfile.ActionFaults, at, t, d.proxies.Set(ph.ScaledFaults(d.scale)))
			}
		}
		if rs := ph.Restart; rs != nil {
			when := at + rs.After
			if !wait(ctx, d.real(when)) {
				return
			}
			t := time.Now()
			replayed, err := d.restart(ctx, i, rs.Signal)
			d.record(ph.Name, resultsfile.RestartAction(rs.Signal), when, t, err, replayed)
		}
	}
}

// restart stops and starts the mock service's process, then gives it the
// run's seed (at its start), the scenario's profile and every phase's
// settings up to phase i, in order.
func (d *phaseDriver) restart(ctx context.Context, i int, signal phases.Signal) (replayed string, err error) {
	if d.restarter == nil {
		return "", ErrCannotRestart
	}
	if replayed, err = d.restarter.Restart(ctx, signal, d.seed); err != nil {
		return replayed, err
	}
	return replayed, d.resume(ctx, i)
}

// resume gives a restarted mock service the scenario's profile and every
// phase's settings up to phase i, in order.
func (d *phaseDriver) resume(ctx context.Context, i int) error {
	if _, err := d.mock.DiscoverWait(ctx, api.PathEnrich, restartWait); err != nil {
		return fmt.Errorf("after the restart: %w", err)
	}
	if err := d.mock.SetProfile(ctx, d.scen.Profile); err != nil {
		return fmt.Errorf("after the restart: %w", err)
	}
	for j := 0; j <= i; j++ {
		if err := d.set(ctx, j); err != nil {
			return fmt.Errorf("after the restart: phase %s: %w", d.scen.Phases[j].Name, err)
		}
	}
	return nil
}

// Events returns what was done, in order.
func (d *phaseDriver) Events() []resultsfile.PhaseEvent {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]resultsfile.PhaseEvent(nil), d.events...)
}

// restoreShape gives both stations back the workers, queue slots and
// refusal status of the mock service's configuration, which a phased run
// may have changed.
func restoreShape(ctx context.Context, mock api.Client, cfg config.Config) error {
	shape := func(s config.Station) map[string]any {
		return map[string]any{"workers": s.Workers, "queue": s.Queue, "reject_status": s.RejectStatus}
	}
	return mock.PatchConfig(ctx, map[string]any{api.Enrichment: shape(cfg.Enrichment), api.Records: shape(cfg.Records)})
}

// phased prepares cell c's run when its scenario is phased: the first
// phase's settings, a fault proxy per dependency when any phase has faults
// (the child's calls go through them), the child's phases and its
// start startLead ahead, and the driver that makes the later phases'
// changes. For another scenario it does nothing (nil driver).
func (ex *execution) phased(ctx context.Context, mock api.Client, c design.Cell, scale float64, rec *resultsfile.RunRecord, run *records.Config) (*phaseDriver, func(), error) {
	scen, ok := ex.cfg.Spec.Phased(c.Scenario)
	if !ok {
		return nil, func() {}, nil
	}
	d := &phaseDriver{restarter: ex.cfg.Restarter, mock: mock, scen: scen, scale: scale, seed: rec.Seed}
	d.apply = d.patchMock
	rec.Faulted = ex.cfg.Spec.Faulted(c.Scenario)
	stop := func() {}
	if scen.HasFaults() {
		target := ex.clientTarget(mock)
		p, err := faults.Start(map[string]string{api.Enrichment: target, api.Records: target}, scen.Phases[0].ScaledFaults(scale))
		if err != nil {
			return nil, stop, fmt.Errorf("fault proxies: %w", err)
		}
		d.proxies, stop = p, sync.OnceFunc(p.Stop)
		run.CallURLs = map[string]string{api.Enrichment: p.URLs[api.Enrichment], api.Records: p.URLs[api.Records]}
	}
	if err := d.prepare(ctx); err != nil {
		stop()
		return nil, func() {}, fmt.Errorf("phase %s: set: %w", scen.Phases[0].Name, err)
	}
	d.begin(run)
	return d, stop, nil
}
