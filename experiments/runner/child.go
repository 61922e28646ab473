package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
)

// Bounds of one run's wall-clock limit: a generous multiple of the time its
// cell's Little's-law bound allows (with one record in flight where the
// strategy leaves it to the runtime), plus a fixed allowance for starting.
const (
	runLimitFactor = 10
	runLimitBase   = 30 * time.Second
)

// runLimit is how long one run of cell c may take in real time before its
// child is killed and the run fails.
func (ex *execution) runLimit(c design.Cell, scale float64) time.Duration {
	spec := ex.cfg.Spec
	if ex.cfg.RunLimit > 0 {
		return ex.cfg.RunLimit
	}
	if spec.Duration > 0 { // time-bounded: the duration, and a drain as long
		return runLimitBase + time.Duration(3*float64(spec.Duration)*scale)
	}
	labSeconds := plan.ExpectedLabSeconds(spec, ex.cfg.MockConfig, c, judge.AdvisedStrategies(ex.advised))
	if labSeconds == 0 {
		return runLimitBase * runLimitFactor
	}
	return runLimitBase + time.Duration(runLimitFactor*labSeconds*scale*float64(time.Second))
}

// runAt runs cell c once, as a CPU-limited child, against the mock service
// mock running at time scale scale: it waits for the mock service to finish
// earlier work, resets it with the run's seed, runs the child, waits for
// quiet again, scrapes, resolves the writes of unknown outcome, and
// derives the run's metrics and status (judge.Derive).
func (ex *execution) runAt(ctx context.Context, mock api.Client, scale float64, c design.Cell, run int) (rec resultsfile.RunRecord) {
	if ex.cfg.Spec.Own != nil {
		return ex.runCopies(ctx, scale, c, run)
	}
	rec = resultsfile.RunRecord{Cell: c, Run: run, Seed: plan.RunSeed(ex.cfg.Spec, run), Status: resultsfile.RunValid}
	t0 := time.Now()
	defer func() { rec.Seconds = time.Since(t0).Seconds() }() // rec is the named result
	fail := func(err error) resultsfile.RunRecord {
		rec.Status, rec.Reason = resultsfile.RunFailed, err.Error()
		return rec
	}
	quietFor := quietLimit(ex.cfg.MockConfig, scale)
	if err := ex.prepare(ctx, mock, c, quietFor, &rec); err != nil {
		return fail(err)
	}
	lim, err := ex.cpuLimit(c, &rec)
	if err != nil {
		return fail(err)
	}
	defer lim.Cleanup()
	cfg, err := ex.childConfig(mock, c, run, scale)
	if err != nil {
		return fail(err)
	}
	driver, stopProxies, err := ex.phased(ctx, mock, c, scale, &rec, &cfg)
	if err != nil {
		return fail(err)
	}
	defer stopProxies()
	cres, err := ex.child(ctx, cfg, lim.Env, ex.runLimit(c, scale), driver, stopProxies, &rec)
	if err != nil {
		return fail(err)
	}
	after := waitQuiet(ctx, mock, quietFor)
	rec.QuietAfter = &after
	st, err := mock.Scrape(ctx)
	if err != nil {
		return fail(fmt.Errorf("scrape: %w", err))
	}
	cres.Server = nil // the runner's own scrape is the record
	keepTimeline(&cres, run)
	unknown := resolveUnknown(ctx, mock, cres)
	rec.Client, rec.Server, rec.Unknown = &cres, &st, &unknown
	judge.Derive(&rec, scale)
	return rec
}

// cpuLimit prepares cell c's CPU limit for a child and says in rec how it
// is applied; the caller cleans it up.
func (ex *execution) cpuLimit(c design.Cell, rec *resultsfile.RunRecord) (cpulimit.Limit, error) {
	setting, _ := ex.cfg.Spec.CPU(c.CPU)
	lim, err := cpulimit.Prepare(setting.Limit(), fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err != nil {
		return lim, fmt.Errorf("cpu limit %s: %w", c.CPU, err)
	}
	rec.Mechanism, rec.MechanismKind = lim.Mechanism, lim.Kind
	return lim, nil
}

// keepTimeline keeps run 1's timeline of a cell, downsampled, and drops
// the others'.
func keepTimeline(cres *records.Result, run int) {
	if run != 1 {
		cres.Timeline = nil
	}
	cres.Timeline = downsample(cres.Timeline, maxTimelineSamples)
}

// prepare gives the mock service the cell's profile and its stations'
// configured shape, waits for it to finish earlier work (rec's
// QuietBefore), and resets it with the run's seed.
func (ex *execution) prepare(ctx context.Context, mock api.Client, c design.Cell, quietFor time.Duration, rec *resultsfile.RunRecord) error {
	if err := mock.SetProfile(ctx, ex.cfg.Spec.ProfileOf(c.Scenario)); err != nil {
		return fmt.Errorf("set profile: %w", err)
	}
	if ex.cfg.Spec.HasPhased() { // an earlier phased run may have changed them
		if err := restoreShape(ctx, mock, ex.cfg.MockConfig); err != nil {
			return fmt.Errorf("restore the stations' settings: %w", err)
		}
	}
	before := waitQuiet(ctx, mock, quietFor)
	rec.QuietBefore = &before
	if err := mock.ResetSeed(ctx, rec.Seed); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	return nil
}

// EnvRunProcess, when set in a loadlab binary's environment, makes it run
// the records of the run the variable holds (a records.Config as JSON)
// instead of a command, print the result as JSON on its standard output
// and exit as loadlab run --json would: the experiment's client as a
// process of its own, under the cell's CPU limit.
const EnvRunProcess = "LOADLAB_RUN_CONFIG"

// childConfig is run run of cell c, as the child runs it.
func (ex *execution) childConfig(mock api.Client, c design.Cell, run int, scale float64) (records.Config, error) {
	spec := ex.cfg.Spec
	cfg := records.Config{Target: ex.clientTarget(mock), Records: spec.RecordsFor(c), TimeScale: scale,
		CallTimeout: spec.CallTimeout, PermitTimeout: spec.PermitTimeout, Duration: spec.Duration,
		RunID: fmt.Sprintf("%s-%s-%s-%d-", c.Strategy, c.Scenario, c.CPU, run), SampleInterval: sampleInterval(scale)}
	var s strategy.Strategy
	var err error
	if c.Strategy == design.Advised {
		a := ex.advised[c.Scenario]
		if a == nil || a.Failed != "" {
			return cfg, fmt.Errorf("strategy %s for %s: none was advised", design.Advised, c.Scenario)
		}
		s = a.Strategy.Strategy()
	} else if s, err = strategy.Parse(c.Strategy); err != nil {
		return cfg, err
	}
	if cfg.Strategy, err = s.With(strategy.Overrides{}, pipeline.Lab()); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// child runs the client process with run's configuration and env until it
// ends or limit passes, the phase driver (if any) beside it, and returns
// its result. A child that exits 1 (records failed) still gives one. At
// the limit, or when ctx ends, the child is asked to stop (SIGTERM: it
// begins no more records) and killed childGrace later if it has not.
func (ex *execution) child(ctx context.Context, run records.Config, env []string, limit time.Duration, driver *phaseDriver, stopProxies func(), rec *resultsfile.RunRecord) (records.Result, error) {
	var cres records.Result
	cfg, err := json.Marshal(run)
	if err != nil {
		return cres, fmt.Errorf("client: its configuration: %w", err)
	}
	runCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(runCtx, ex.cfg.Binary)
	terminate(cmd, childGrace)
	cmd.Env = append(append(os.Environ(), env...), EnvRunProcess+"="+string(cfg))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if driver != nil {
		// The driver's changes end with the phases, which end before the
		// child does; a child that ended early (failed) stops them.
		driverCtx, stopDriver := context.WithCancel(runCtx)
		defer stopDriver()
		driven := make(chan struct{})
		go func() { defer close(driven); driver.run(driverCtx) }()
		err = cmd.Run()
		if time.Now().Before(driver.real(driver.scen.Total())) {
			stopDriver()
		}
		<-driven
		stopProxies() // nothing delayed in a proxy reaches the mock service after the quiet wait begins
		rec.PhaseEvents = driver.Events()
	} else {
		err = cmd.Run()
	}
	if errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		return cres, fmt.Errorf("client: stopped at the run's wall-clock limit of %v", limit.Round(time.Second))
	}
	var exitErr *exec.ExitError
	if err != nil && !(errors.As(err, &exitErr) && exitErr.ExitCode() == 1) {
		return cres, fmt.Errorf("client: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), &cres); err != nil {
		return cres, fmt.Errorf("client output: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return cres, nil
}

// childGrace is how long a child asked to stop has before it is killed.
const childGrace = 10 * time.Second

// terminate makes cmd's context, when it ends, ask the process to stop
// (SIGTERM) rather than kill it, and kill it (SIGKILL) grace later if it
// has not exited; Wait returns by then.
func terminate(cmd *exec.Cmd, grace time.Duration) {
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = grace
}

// clientTarget is where the child sends its calls: ClientTarget when set
// (a proxy in front of the mock service, say), else the mock service.
func (ex *execution) clientTarget(mock api.Client) string {
	if ex.cfg.ClientTarget != "" && mock.BaseURL == ex.mock.BaseURL {
		return ex.cfg.ClientTarget
	}
	return mock.BaseURL
}

const maxTimelineSamples = 600

// downsample keeps at most n evenly spaced samples.
func downsample(xs []records.Sample, n int) []records.Sample {
	if len(xs) <= n {
		return xs
	}
	out := make([]records.Sample, 0, n)
	for i := range n {
		out = append(out, xs[i*len(xs)/n])
	}
	return out
}

// sampleInterval samples in-flight calls about every 20 lab milliseconds.
func sampleInterval(scale float64) time.Duration {
	return max(time.Duration(float64(20*time.Millisecond)*scale), time.Millisecond)
}
