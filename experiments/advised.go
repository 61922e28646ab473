package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/loadlab/loadlab/client/advise"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"

	"go.yaml.in/yaml/v3"
)

// AdvisedStrategy is the strategy "advised" for one scenario, with the
// probes and the advice it came from (raw data, in results.json).
type AdvisedStrategy struct {
	Scenario string `json:"scenario"`
	// TimeScale is the experiment's: the probes ran in real time against
	// the mock service at this scale, so the advice's rates and times are
	// per real second (a lab second is a real second / TimeScale).
	TimeScale float64                 `json:"time_scale"`
	Strategy  records.FileStrategy    `json:"strategy"`
	Advice    advise.Advice           `json:"advice"`
	Probes    map[string]probe.Result `json:"probes"`
	// From is the strategy file it was read from (advise.file), if any:
	// then there are no probes, and Advice is what the file recorded.
	From string `json:"from,omitempty"`
	// Failed says why no strategy could be advised; the scenario's
	// advised cells then fail every run.
	Failed string `json:"failed,omitempty"`
}

// adviseAll probes every dependency of the lab's pipeline on the mock
// service under each scenario of an advised cell, and advises a strategy
// per scenario. Probes send only their load route, in real time against
// the mock service at the experiment's time scale; the advice's rates are
// per real second at that scale, its permits and records in flight apply
// to the runs as they are.
func (r *Runner) adviseAll(ctx context.Context, mock api.Client, mockCfg config.Config) map[string]*AdvisedStrategy {
	var scenarios []string
	for _, c := range r.Spec.Cells() {
		if c.Strategy == Advised && !slices.Contains(scenarios, c.Scenario) {
			scenarios = append(scenarios, c.Scenario)
		}
	}
	if len(scenarios) == 0 {
		return nil
	}
	out := map[string]*AdvisedStrategy{}
	for _, sc := range scenarios {
		if ctx.Err() != nil {
			break
		}
		out[sc] = r.adviseOne(ctx, mock, mockCfg, sc)
	}
	return out
}

func (r *Runner) adviseOne(ctx context.Context, mock api.Client, mockCfg config.Config, scenario string) *AdvisedStrategy {
	a := &AdvisedStrategy{Scenario: scenario, TimeScale: r.Spec.TimeScale, Probes: map[string]probe.Result{}}
	fail := func(format string, args ...any) *AdvisedStrategy {
		a.Failed = fmt.Sprintf(format, args...)
		return a
	}
	spec, scale := r.Spec.Advise, r.Spec.TimeScale
	if spec.File != "" {
		return fromFile(a, spec.File)
	}
	// A phased scenario is probed under the profile it starts from.
	if err := mock.SetProfile(ctx, r.Spec.profileOf(scenario)); err != nil {
		return fail("set profile: %v", err)
	}
	lab := pipeline.Lab()
	caps := map[string]advise.Capacity{}
	for _, d := range lab.Dependencies {
		waitQuiet(ctx, mock, quietLimit(mockCfg, scale))
		if err := mock.Reset(ctx); err != nil {
			return fail("reset: %v", err)
		}
		ps := spec.Probes[d.Name]
		cfg := probe.Default()
		path, _, err := d.Render(sampleData)
		if err != nil {
			return fail("%s: %v", d.Name, err)
		}
		// Where the runs send their calls (a test's proxy, say): the
		// capacity the client will meet.
		cfg.Target, cfg.Method, cfg.Body = r.clientTarget(mock)+path, d.Method, ps.Body
		cfg.Concurrency, cfg.MaxConcurrency = ps.Concurrency, ps.Concurrency[len(ps.Concurrency)-1]
		cfg.Step, cfg.WarmUp = scaled(spec.Step, scale), scaled(spec.WarmUp, scale)
		cfg.Timeout = scaled(r.Spec.CallTimeout, scale) // the client's call timeout: capacity as it sees it
		cfg.OKStatuses, cfg.RejectStatuses = d.Success, d.Rejection
		if ps.StopErrorRatio > 0 {
			cfg.StopErrorRatio = ps.StopErrorRatio
		}
		if r.Progress != nil {
			r.Progress(Progress{Advising: scenario + "/" + d.Name})
		}
		res, err := probe.Run(ctx, cfg, nil)
		if err != nil {
			return fail("probe %s: %v", d.Name, err)
		}
		a.Probes[d.Name] = res
		if res.Partial {
			return fail("probe %s: interrupted", d.Name)
		}
		caps[d.Name], err = capacityOf(res)
		if err != nil {
			return fail("probe %s: %v", d.Name, err)
		}
	}
	rate := spec.TargetRate / scale // records per real second at the time scale
	adv, err := advise.Advise(lab, caps, rate)
	if err != nil {
		return fail("advise: %v", err)
	}
	a.Advice, a.Strategy = adv, adv.Strategy(Advised)
	return a
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

// writeAdvised writes each scenario's advised strategy to a file of its own
// for the runs' --strategy-file; cleanup removes them.
func writeAdvised(advised map[string]*AdvisedStrategy) (files map[string]string, cleanup func(), err error) {
	if len(advised) == 0 {
		return nil, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "loadlab-advised-")
	if err != nil {
		return nil, nil, fmt.Errorf("experiment: advised strategies: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	files = map[string]string{}
	for sc, a := range advised {
		if a.Failed != "" {
			continue
		}
		// The strategy as resolved (probed and advised, or from a file):
		// the runs read nothing else.
		data, err := yaml.Marshal(records.StrategyFile{Strategy: a.Strategy})
		if err == nil {
			files[sc] = filepath.Join(dir, sc+".yaml")
			err = os.WriteFile(files[sc], data, 0o644)
		}
		if err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("experiment: advised strategy for %s: %w", sc, err)
		}
	}
	return files, cleanup, nil
}

// fromFile takes the advised strategy from a strategy file: its strategy,
// and the advice it records when loadlab advise wrote it.
func fromFile(a *AdvisedStrategy, file string) *AdvisedStrategy {
	s, err := records.LoadStrategyFile(file, pipeline.Lab())
	if err != nil {
		a.Failed = err.Error()
		return a
	}
	a.Strategy = records.FileStrategy{Name: Advised, RecordsInFlight: s.RecordsInFlight, SharedPermits: s.SharedPermits,
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
