package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/loadlab/loadlab/client/advise"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"

	"go.yaml.in/yaml/v3"
)

// adviseAll probes every dependency of the lab's pipeline on the mock
// service under each scenario of an advised cell, and advises a strategy
// per scenario. Probes send only their load route, in real time against
// the mock service at the experiment's time scale; the advice's rates are
// per real second at that scale, its permits and records in flight apply
// to the runs as they are.
func (ex *execution) adviseAll(ctx context.Context) map[string]*resultsfile.AdvisedStrategy {
	var scenarios []string
	for _, c := range ex.cfg.Spec.Cells() {
		if ex.cfg.Calibration.Only && !slices.Contains(ex.bias.Cells, c) {
			continue // the calibration alone runs only its cells
		}
		if c.Strategy == design.Advised && !slices.Contains(scenarios, c.Scenario) {
			scenarios = append(scenarios, c.Scenario)
		}
	}
	if len(scenarios) == 0 {
		return nil
	}
	out := map[string]*resultsfile.AdvisedStrategy{}
	for _, sc := range scenarios {
		if ctx.Err() != nil {
			break
		}
		out[sc] = ex.adviseOne(ctx, sc)
	}
	ex.advised = out
	return out
}

// adviseOne advises the strategy of one scenario: from advise.file, or
// from probes of each dependency under the scenario's profile.
func (ex *execution) adviseOne(ctx context.Context, scenario string) *resultsfile.AdvisedStrategy {
	spec := ex.cfg.Spec
	mock, scale, err := ex.at(design.Cell{Strategy: design.Advised, Scenario: scenario, CPU: advisedCPU(spec, scenario)})
	a := &resultsfile.AdvisedStrategy{Scenario: scenario, TimeScale: scale, Probes: map[string]probe.Result{}}
	if ex.exploratory() && spec.Advise.File == "" {
		a.Shortened = fmt.Sprintf("an exploratory run: probe steps and warm-ups 1/%d of the design's (each step at least the call timeout)", exploratoryProbe)
	}
	fail := func(format string, args ...any) *resultsfile.AdvisedStrategy {
		a.Failed = fmt.Sprintf(format, args...)
		return a
	}
	if spec.Advise.File != "" {
		return fromFile(a, spec.Advise.File)
	}
	if err != nil {
		return fail("%v", err)
	}
	at := func(string) (api.Client, time.Duration, bool) {
		return mock, quietLimit(ex.cfg.MockConfig, scale), true
	}
	if spec.Own != nil {
		own, stop, err := ex.ownTargets(scenario, scale)
		if err != nil {
			return fail("virtual copies: %v", err)
		}
		defer stop()
		at = own
	} else if err := mock.SetProfile(ctx, spec.ProfileOf(scenario)); err != nil {
		// A phased scenario is probed under the profile it starts from.
		return fail("set profile: %v", err)
	}
	lab := spec.PipelineOf()
	caps := map[string]advise.Capacity{}
	for _, d := range lab.Dependencies {
		target, quietFor, isMock := at(d.Name)
		if isMock {
			waitQuiet(ctx, target, quietFor)
			if err := target.Reset(ctx); err != nil {
				return fail("reset: %v", err)
			}
		}
		cfg, err := ex.probeConfig(d, target, scale)
		if err != nil {
			return fail("%s: %v", d.Name, err)
		}
		ex.progress.Advising(scenario, d.Name)
		res, err := probe.Run(ctx, cfg, nil)
		if err != nil {
			return fail("probe %s: %v", d.Name, err)
		}
		a.Probes[d.Name] = res
		if res.Partial {
			return fail("probe %s: interrupted", d.Name)
		}
		if caps[d.Name], err = capacityOf(res); err != nil {
			return fail("probe %s: %v", d.Name, err)
		}
	}
	rate := spec.Advise.TargetRate / scale // records per real second at the time scale
	adv, err := advise.Advise(lab, caps, rate)
	if err != nil {
		return fail("advise: %v", err)
	}
	a.Advice, a.Strategy = adv, adv.Strategy(design.Advised)
	for dep, r := range a.Strategy.Rates {
		a.Strategy.Rates[dep] = r * scale // a run's rates are per lab second
	}
	return a
}

// ownTargets are, for an experiment on one's own services, where each
// dependency is probed for the advice under scenario: its copy as the
// scenario shapes it (started here, until stop), or a dependency without
// one at its base_url, as it is (neither waited on nor reset).
func (ex *execution) ownTargets(scenario string, scale float64) (at func(string) (api.Client, time.Duration, bool), stop func(), err error) {
	spec := ex.cfg.Spec
	shaped, urls, stop, err := ex.startCopies(scenario, spec.Seed, scale)
	if err != nil {
		return nil, nil, err
	}
	at = func(dep string) (api.Client, time.Duration, bool) {
		if url, ok := urls[dep]; ok {
			return ex.mockClient(url), copiesQuietLimit([]map[string]config.Virtual{shaped}, scale), true
		}
		return api.Client{BaseURL: spec.Own.Pipeline.Dependency(dep).BaseURL}, 0, false
	}
	return at, stop, nil
}

// probeConfig is the probe of dependency d that the experiment's advise
// section asks for, in real time against mock at its time scale, sent
// where the runs send their calls (a test's proxy, say): the capacity the
// client will meet, with the client's call timeout.
func (ex *execution) probeConfig(d pipeline.Dependency, mock api.Client, scale float64) (probe.Config, error) {
	spec := ex.cfg.Spec.Advise
	ps := spec.Probes[d.Name]
	cfg := probe.Default()
	path, _, err := d.Render(sampleData)
	if err != nil {
		return cfg, err
	}
	cfg.Target, cfg.Method, cfg.Body = ex.clientTarget(mock)+path, d.Method, ps.Body
	cfg.Concurrency, cfg.MaxConcurrency = ps.Concurrency, ps.Concurrency[len(ps.Concurrency)-1]
	cfg.Step, cfg.WarmUp = scaled(spec.Step, scale), scaled(spec.WarmUp, scale)
	cfg.Timeout = scaled(ex.cfg.Spec.CallTimeout, scale)
	if ex.exploratory() {
		// Never shorter than a call may take: a step must see calls end.
		cfg.Step, cfg.WarmUp = max(cfg.Step/exploratoryProbe, cfg.Timeout, minProbeStep), cfg.WarmUp/exploratoryProbe
	}
	cfg.OKStatuses, cfg.RejectStatuses, cfg.Dial = d.Success, d.Rejection, ex.cfg.Dial
	if ps.StopErrorRatio > 0 {
		cfg.StopErrorRatio = ps.StopErrorRatio
	}
	return cfg, nil
}

// An exploratory run (not the locked design: a quick look) probes for
// the advised strategy in a quarter of the design's steps and warm-ups,
// each step at least the call timeout and minProbeStep, and its results
// say so.
const (
	exploratoryProbe = 4
	minProbeStep     = 100 * time.Millisecond
)

// exploratory says whether the run is not of the locked design.
func (ex *execution) exploratory() bool {
	if len(ex.cfg.Hypotheses) == 0 {
		return false
	}
	return design.Exploratory(ex.cfg.Lock, ex.cfg.Spec, ex.cfg.Hypotheses[0].Rules) != ""
}

// advisedCPU is the CPU setting of scenario's first advised cell (the
// design keeps every advised cell of a scenario at one time scale).
func advisedCPU(spec design.Spec, scenario string) string {
	for _, c := range spec.Cells() {
		if c.Strategy == design.Advised && c.Scenario == scenario {
			return c.CPU
		}
	}
	return ""
}

// sampleData renders a dependency's path for a probe (the lab's paths
// take no record fields).
var sampleData = pipeline.Data{ID: "probe", Step: 1, Complete: true}

func scaled(d time.Duration, scale float64) time.Duration {
	return time.Duration(float64(d) * scale)
}

// capacityOf reads a probe's result as advise takes it: the fields
// loadlab probe --json writes, through the same JSON.
func capacityOf(res probe.Result) (advise.Capacity, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return advise.Capacity{}, err
	}
	var c advise.Capacity
	err = json.Unmarshal(b, &c)
	return c, err
}

// fromFile takes the advised strategy from a strategy file: its strategy,
// and the advice it records when loadlab advise wrote it.
func fromFile(a *resultsfile.AdvisedStrategy, file string) *resultsfile.AdvisedStrategy {
	s, err := strategy.LoadFile(file, pipeline.Lab())
	if err != nil {
		a.Failed = err.Error()
		return a
	}
	a.Strategy = strategy.FileStrategy{Name: design.Advised, RecordsInFlight: s.RecordsInFlight, SharedPermits: s.SharedPermits,
		Permits: s.Permits, Rates: s.Rates}
	a.From = file
	var f struct {
		Advice advise.Advice `yaml:"advice"`
	}
	if data, err := os.ReadFile(file); err == nil && yaml.Unmarshal(data, &f) == nil {
		a.Advice = f.Advice
	}
	return a
}
