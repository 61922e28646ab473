package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/loadlab/loadlab/client/faults"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/own"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// CopyStarter serves virtual copies of one's own dependencies for an
// experiment on one's own services.
type CopyStarter interface {
	// StartCopies serves cfg's copies until stop is called; urls are
	// their base URLs by name.
	StartCopies(cfg config.Copies) (urls map[string]string, stop func() error, err error)
}

// ErrNoCopies: an experiment on one's own services, and the runner has
// no CopyStarter to serve its virtual copies.
var ErrNoCopies = errors.New("experiment: the runner cannot serve virtual copies")

// copySet is one run's virtual copies, by dependency: what the runner
// waits on for quiet and scrapes, as it does the lab's mock service.
type copySet map[string]api.Client

// Stats is every copy's station under its dependency's name, with the
// time scale and the seed they share (the seed of the first copy whose
// seed differs from the others', which a reconciliation then finds).
func (cs copySet) Stats(ctx context.Context) (api.Stats, error) {
	out := api.Stats{Stations: map[string]api.StationStats{}}
	for i, name := range slices.Sorted(maps.Keys(cs)) {
		st, err := cs[name].Stats(ctx)
		if err != nil {
			return out, fmt.Errorf("copy of %s: %w", name, err)
		}
		if i == 0 || st.Seed != out.Seed {
			out.Seed = st.Seed
		}
		out.TimeScale = st.TimeScale
		out.Stations[name] = st.Stations[name]
	}
	return out, nil
}

// runCopies runs cell c once, as a CPU-limited child, against virtual
// copies of the experiment's own dependencies started for this run alone
// with the run's seed, at time scale scale, shaped as the cell's scenario
// says: it runs the child, waits for quiet, takes the copies' counts and
// derives the run's metrics and status (judge.Derive). The copies keep
// no store: a write of unknown outcome cannot be looked up, and stays
// unresolved.
func (ex *execution) runCopies(ctx context.Context, scale float64, c design.Cell, run int) (rec resultsfile.RunRecord) {
	spec := ex.cfg.Spec
	rec = resultsfile.RunRecord{Cell: c, Run: run, Seed: plan.RunSeed(spec, run), Status: resultsfile.RunValid, WriteStation: spec.Own.Write(),
		Real: spec.Own.Real()}
	t0 := time.Now()
	defer func() { rec.Seconds = time.Since(t0).Seconds() }() // rec is the named result
	fail := func(err error) resultsfile.RunRecord {
		rec.Status, rec.Reason = resultsfile.RunFailed, err.Error()
		return rec
	}
	_, urls, stop, err := ex.startCopies(c.Scenario, rec.Seed, scale)
	if err != nil {
		return fail(fmt.Errorf("virtual copies: %w", err))
	}
	defer stop()
	copies := copySet{}
	for name, url := range urls {
		copies[name] = ex.mockClient(url)
	}
	quietFor := copiesQuietLimit(spec.PhaseCopies(c.Scenario), scale) // the copies as they start, and each later phase
	before := waitQuiet(ctx, copies, quietFor)
	rec.QuietBefore = &before
	lim, err := ex.cpuLimit(c, &rec)
	if err != nil {
		return fail(err)
	}
	defer lim.Cleanup()
	runCfg, err := ex.ownChildConfig(urls, c, run, scale)
	if err != nil {
		return fail(err)
	}
	driver, stopProxies, err := ex.phasedCopies(c, copies, scale, &rec, &runCfg)
	if err != nil {
		return fail(err)
	}
	defer stopProxies()
	cres, err := ex.child(ctx, runCfg, lim.Env, ex.runLimit(c, scale), driver, stopProxies, &rec)
	if err != nil {
		return fail(err)
	}
	after := waitQuiet(ctx, copies, quietFor)
	rec.QuietAfter = &after
	st, err := copies.Stats(ctx)
	if err != nil {
		return fail(fmt.Errorf("the copies' counts: %w", err))
	}
	cres.Server = nil // the runner's own count is the record
	keepTimeline(&cres, run)
	unknown := resultsfile.Resolution{Unresolved: cres.WriteUnknown}
	rec.Client, rec.Server, rec.Unknown = &cres, &st, &unknown
	judge.Derive(&rec, scale)
	return rec
}

// startCopies starts the copies as scenario shapes them (shaped, by
// dependency), with seed at time scale scale, until stop; urls are their
// base URLs.
func (ex *execution) startCopies(scenario string, seed uint32, scale float64) (shaped map[string]config.Virtual, urls map[string]string, stop func(), err error) {
	shaped = ex.cfg.Spec.CopiesFor(scenario)
	cfg := config.Copies{Seed: seed, TimeScale: scale}
	for _, name := range slices.Sorted(maps.Keys(shaped)) {
		cfg.Copies = append(cfg.Copies, shaped[name])
	}
	urls, stopCopies, err := ex.cfg.Copies.StartCopies(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	return shaped, urls, func() { _ = stopCopies() }, nil
}

// ownChildConfig is run run of cell c of an experiment on one's own
// services, as the child runs it: the pipeline with each dependency's
// calls sent to its copy at urls.
func (ex *execution) ownChildConfig(urls map[string]string, c design.Cell, run int, scale float64) (records.Config, error) {
	spec := ex.cfg.Spec
	p := spec.Own.Pipeline
	target := urls[p.Write()]
	if target == "" { // the write is a real service's
		target = p.Dependency(p.Write()).BaseURL
	}
	cfg := records.Config{Target: target, CallURLs: urls, Records: spec.RecordsFor(c), TimeScale: scale, Pipeline: p,
		CallTimeout: spec.CallTimeout, PermitTimeout: spec.PermitTimeout, Duration: spec.Duration,
		RunID: fmt.Sprintf("%s-%s-%s-%d-", c.Strategy, c.Scenario, c.CPU, run), SampleInterval: sampleInterval(scale)}
	s, err := ex.strategyOf(c)
	if err != nil {
		return cfg, err
	}
	if cfg.Strategy, err = s.With(strategy.Overrides{}, p); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// strategyOf is the strategy cell c runs: the scenario's advised one, a
// strategy file's, or one of the lab's by name.
func (ex *execution) strategyOf(c design.Cell) (strategy.Strategy, error) {
	if c.Strategy == design.Advised {
		a := ex.advised[c.Scenario]
		if a == nil || a.Failed != "" {
			return strategy.Strategy{}, fmt.Errorf("strategy %s for %s: none was advised", design.Advised, c.Scenario)
		}
		return a.Strategy.Strategy(), nil
	}
	s, ok := ex.cfg.Spec.Strategy(c, nil)
	if !ok {
		return s, fmt.Errorf("strategy %s: not one of the lab's, nor a strategy file's", c.Strategy)
	}
	return s, nil
}

// copiesQuietLimit is how long the runner waits for the copies to go
// quiet: three times the longest service time any configures in any of
// its shapes (a phased scenario's phases), at the time scale, and at
// least a second.
func copiesQuietLimit(shapes []map[string]config.Virtual, scale float64) time.Duration {
	var longest time.Duration
	for _, copies := range shapes {
		for _, v := range copies {
			longest = max(longest, v.Service.Longest())
		}
	}
	return max(time.Duration(3*float64(longest)*scale), time.Second)
}

// phasedCopies prepares cell c's run when its scenario is one of the
// file's phased scenarios of copies: a fault proxy in front of every copy
// when any phase has faults (the child's calls to them go through it),
// the child's phases and its start startLead ahead, and the driver that
// gives each copy a later phase names its live settings (PATCH
// /admin/config: the copy as fitted with the phase's changes). The copies
// start as the first phase shapes them. For another scenario it does
// nothing (nil driver).
func (ex *execution) phasedCopies(c design.Cell, copies copySet, scale float64, rec *resultsfile.RunRecord, run *records.Config) (*phaseDriver, func(), error) {
	spec := ex.cfg.Spec
	scen, ok := spec.PhasedScenarios[c.Scenario]
	if !ok {
		return nil, func() {}, nil
	}
	shapes := spec.PhaseCopies(c.Scenario)
	d := &phaseDriver{scen: scen, scale: scale, seed: rec.Seed}
	d.apply = func(ctx context.Context, i int) error {
		for _, dep := range slices.Sorted(maps.Keys(scen.Phases[i].Set)) {
			if err := copies[dep].PatchConfig(ctx, own.CopyPatch(dep, shapes[i][dep])); err != nil {
				return fmt.Errorf("copy of %s: %w", dep, err)
			}
		}
		return nil
	}
	rec.Faulted = spec.Faulted(c.Scenario)
	stop := func() {}
	if scen.HasFaults() {
		upstreams := map[string]string{}
		for dep := range copies {
			upstreams[dep] = copies[dep].BaseURL
		}
		p, err := faults.Start(upstreams, scen.Phases[0].ScaledFaults(scale))
		if err != nil {
			return nil, stop, fmt.Errorf("fault proxies: %w", err)
		}
		d.proxies, stop = p, sync.OnceFunc(p.Stop)
		run.CallURLs = maps.Clone(run.CallURLs)
		maps.Copy(run.CallURLs, p.URLs)
	}
	d.begin(run)
	return d, stop, nil
}
