// Package runner runs an experiment's matrix against a mock service: in
// one machine's order (or one shard's part of it), each client run a
// CPU-limited child process of the loadlab binary, with the mock service
// reset to the run's seed before and scraped once quiet after; phased
// scenarios change the mock service's settings, faults and process as the
// run goes; before the matrix it calibrates the time scale and probes the
// dependencies for the strategy "advised". What it measured, kept as
// package resultsfile's data, goes to package judge, which derives each
// run's status and the verdicts.
package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// Config is what an experiment runs and against what. It is a value: a
// Runner keeps its own copy.
type Config struct {
	Spec       design.Spec
	Hypotheses []design.Hypothesis
	// Lock is the hypotheses' preregistration: under paired-v2 rules a run
	// of another design is labelled exploratory.
	Lock design.Lock
	// ExperimentFile and HypothesesFile are the files Spec and Hypotheses
	// were read from, which the results name with their SHA-256;
	// ExperimentSHA256 is the experiment file's, when it was not read from
	// ExperimentFile on disk (a file built into loadlab).
	ExperimentFile, HypothesesFile string
	ExperimentSHA256               string
	// Binary is the loadlab executable started for every client run.
	Binary string
	// Target is the mock service's base URL (required). Its time scale
	// must be the experiment's.
	Target string
	// ClientTarget, when set, is where the client runs send their calls
	// instead of Target (a proxy in front of it, say); admin requests, the
	// scrape and the reconciliation still go to Target.
	ClientTarget string
	// AdminToken is the bearer token of the mock service's admin routes.
	AdminToken string
	// Dial, when set, opens the connections of the runner's own requests
	// (admin routes, scrapes, the advised strategy's probes) instead of
	// the system's dialer: a test's in-memory network. The client runs
	// are child processes and always dial for themselves.
	Dial transport.Dialer
	// MockConfig is the mock service's configuration, the source of each
	// cell's bound and of the wait for quiet; the zero Config means
	// config.Default().
	MockConfig config.Config
	// Wait is how long to wait for the mock service to answer (0: ask once).
	Wait time.Duration
	// RunLimit, when > 0, replaces every run's wall-clock limit (by
	// default a generous multiple of its cell's Little's-law time).
	RunLimit time.Duration
	// Calibration is how the time scale's bias is measured.
	Calibration Calibration
	// Shard, when set, runs only that part of the matrix
	// (plan.ShardUnits); the results say which, and are partial until
	// merged with the others.
	Shard *plan.Shard
	// Copies serves the virtual copies of an experiment on one's own
	// services (Spec.Own), started afresh for every run; such an
	// experiment needs no Target.
	Copies CopyStarter
	// Mocks starts the calibration's mock service at time scale 1 (nil:
	// the calibration cannot run, and its verdicts are provisional).
	Mocks MockStarter
	// Restarter restarts the target's process (nil: it cannot be, and a
	// phased scenario with a restart is refused).
	Restarter Restarter
	// Journal, when set, keeps every run on disk as it ends.
	Journal Journal
	// Resume, when set, is what earlier attempts measured: only the
	// missing units run, each with the seed it would have had.
	Resume *Resume
}

// Calibration is what the runner does with the time-scale calibration
// the experiment file plans (design.CalibrationSpec): Accept judges
// verdicts over a bias beyond the limit, AcceptUncalibrated makes final
// the verdicts whose bias could not be measured, and Only runs the
// calibrated cells' pairs alone, for their biases: no matrix, no
// verdicts.
type Calibration struct {
	Accept             bool
	AcceptUncalibrated bool
	Only               bool
}

// MockStarter serves mock services beside the experiment's target.
type MockStarter interface {
	// StartMock serves a mock service with cfg until stop is called.
	StartMock(cfg config.Config) (url string, stop func() error, err error)
}

// Restarter restarts the target's mock service process.
type Restarter interface {
	// Restart stops the process with sig, waits for it to exit, and starts
	// it again on the same address with seed; replayed is what its store
	// replayed.
	Restart(ctx context.Context, sig phases.Signal, seed uint32) (replayed string, err error)
}

// Errors of a mock service unfit for the experiment; nothing is run.
var (
	// ErrMismatch: the mock service is not set up as the experiment needs.
	ErrMismatch = errors.New("experiment: mock service mismatch")
	// ErrNotMock: the target is not a loadlab mock service; it was asked
	// nothing but OPTIONS on the enrichment route (it is api.ErrNotMock).
	ErrNotMock = api.ErrNotMock
	// ErrAdmin: the mock service refused its admin routes (for want of its
	// token, say); nothing was run.
	ErrAdmin = errors.New("experiment: the mock service refused an admin request")
	// ErrCannotRestart: a scenario restarts the mock service, and the
	// runner has no Restarter for the one at its target.
	ErrCannotRestart = errors.New("experiment: the runner cannot restart the mock service")
)

// Runner executes an experiment. It holds no state between runs: Run may
// be called again, and each call reports to its Progress.
type Runner struct {
	cfg      Config
	progress Progress
}

// New returns a runner of cfg reporting to p (nil: to nothing). It refuses
// a config that cannot run: no target, a matrix that cannot be split as
// its shard asks, a scenario that restarts a mock service it cannot.
func New(cfg Config, p Progress) (*Runner, error) {
	switch own := cfg.Spec.Own != nil; {
	case own && cfg.Copies == nil:
		return nil, ErrNoCopies
	case !own && cfg.Target == "":
		return nil, errors.New("experiment: no mock service target")
	}
	if cfg.MockConfig.Profiles == nil {
		cfg.MockConfig = config.Default()
	}
	if cfg.Shard != nil {
		if err := plan.CheckShardable(cfg.Spec, *cfg.Shard); err != nil {
			return nil, err
		}
	}
	if cfg.Spec.HasRestarts() && cfg.Restarter == nil {
		return nil, fmt.Errorf("%w at %s, and a scenario restarts it", ErrCannotRestart, cfg.Target)
	}
	if p == nil {
		p = NoProgress{}
	}
	return &Runner{cfg: cfg, progress: p}, nil
}

// Run checks the mock service, calibrates, advises, executes the matrix
// and judges the hypotheses. A run that fails is recorded with its reason
// and the matrix goes on. Interrupted (ctx ends), it returns what was
// measured, marked partial, with ctx's error.
func (r *Runner) Run(ctx context.Context) (*resultsfile.Results, error) {
	mock, err := r.checkMock(ctx)
	if err != nil {
		return nil, err
	}
	spec := r.cfg.Spec
	res := &resultsfile.Results{Format: resultsfile.ResultsFormat, Experiment: spec, Hypotheses: r.cfg.Hypotheses,
		Environment: ReadEnvironment(), Target: r.cfg.Target, Started: time.Now().UTC(), Lock: r.cfg.Lock,
		ExperimentFile: r.cfg.ExperimentFile, HypothesesFile: r.cfg.HypothesesFile, HypothesesSHA256: r.cfg.Lock.SHA256}
	res.ExperimentSHA256 = r.cfg.ExperimentSHA256
	if res.ExperimentSHA256 == "" && r.cfg.ExperimentFile != "" {
		// Without it a resume would compare two empty strings.
		if res.ExperimentSHA256, err = design.FileSHA256(r.cfg.ExperimentFile); err != nil {
			return nil, fmt.Errorf("the experiment file's SHA-256: %w", err)
		}
	}
	ex := r.newExecution(mock)
	res.TimeScaleBias = ex.bias
	units := plan.Units(spec)
	if r.cfg.Shard != nil {
		units = plan.ShardUnits(spec, *r.cfg.Shard, r.cfg.MockConfig)
		res.Shard = &plan.ShardRecord{Shard: *r.cfg.Shard, Units: units}
	}
	if r.cfg.Calibration.Only {
		units = ex.calibrationUnits()
	} else if err := ex.begin(res); err != nil {
		return nil, err
	}
	started := time.Now().UTC()
	stopOne := ex.startScaleOne(ctx)
	defer stopOne()
	if err := ex.advise(ctx, res); err != nil {
		return nil, err
	}
	var stopped error
	res.Runs, stopped = ex.runUnits(ctx, units)
	ex.finishBias(ctx, res.Runs)
	res.Finished = time.Now().UTC()
	if r.cfg.Calibration.Only {
		res.Shard = nil
		return res, ctx.Err()
	}
	res.Attempts = ex.attempts(res, started)
	res.Cells = judge.Summaries(spec, res.Runs, r.cfg.MockConfig, res.Advised)
	res.Verdicts = judge.Rejudge(res)
	if stopped == nil {
		stopped = ctx.Err()
	}
	if stopped != nil {
		// Interrupted, or the journal failed: what was measured stands,
		// over the completed runs, and says it is partial.
		why := "interrupted"
		if errors.Is(stopped, ErrJournal) {
			why = "stopped: the run log could not be written"
		}
		res.Partial = fmt.Sprintf("%s after %d of %d runs", why, len(res.Runs), len(units))
		return res, stopped
	}
	return res, nil
}

// advise makes the strategies "advised" (or takes those an earlier
// attempt made) and keeps them in the journal.
func (ex *execution) advise(ctx context.Context, res *resultsfile.Results) error {
	if rs := ex.cfg.Resume; rs != nil && rs.Advised != nil {
		ex.advised, res.Advised = rs.Advised, rs.Advised
		return nil
	}
	res.Advised = ex.adviseAll(ctx)
	if res.Advised == nil || ex.cfg.Journal == nil || ctx.Err() != nil || ex.cfg.Calibration.Only {
		return nil
	}
	if err := ex.cfg.Journal.Advised(res.Advised); err != nil {
		return fmt.Errorf("%w: %w", ErrJournal, err)
	}
	return nil
}

// adminConns bounds the runner's own connections to a mock service over
// Config.Dial: its admin requests are one at a time.
const adminConns = 2

// mockClient drives the mock service at url with the admin token, over
// Config.Dial when it is set.
func (r *Runner) mockClient(url string) api.Client {
	c := api.Client{BaseURL: url, Token: r.cfg.AdminToken, Dial: r.cfg.Dial}
	if r.cfg.Dial != nil {
		c.HTTP = transport.NewDial(adminConns, r.cfg.Dial)
	}
	return c
}

// newExecution is one Run's state against mock.
func (r *Runner) newExecution(mock api.Client) *execution {
	return &execution{Runner: r, mock: mock, bias: r.planBias(), ranNow: map[plan.Unit]bool{}}
}

// checkMock asks the target whether it is a loadlab mock service at the
// experiment's time scale whose admin routes answer.
func (r *Runner) checkMock(ctx context.Context) (api.Client, error) {
	mock := r.mockClient(r.cfg.Target)
	if r.cfg.Spec.Own != nil {
		return mock, nil // each run starts its own copies
	}
	id, err := mock.DiscoverWait(ctx, api.PathEnrich, r.cfg.Wait)
	switch {
	case err != nil:
		return mock, fmt.Errorf("experiment: %w", err)
	case id == nil:
		return mock, fmt.Errorf("experiment: %s: %w", r.cfg.Target, ErrNotMock)
	}
	// A mock service at another time scale would make every figure wrong.
	if id.TimeScale != r.cfg.Spec.TimeScale {
		return mock, fmt.Errorf("%w: the mock service runs at time scale %g, the experiment at %g", ErrMismatch, id.TimeScale, r.cfg.Spec.TimeScale)
	}
	// Its admin routes must answer before the first run, not fail every run.
	if err := mock.Reset(ctx); err != nil {
		return mock, fmt.Errorf("%w: %w", ErrAdmin, err)
	}
	return mock, nil
}

// execution is one Run's state: the mock service it runs against, the
// calibration's (at time scale 1) and what it measured, and the advised
// strategies' files.
type execution struct {
	*Runner
	mock api.Client
	// bias is the calibration under way; scaleOne the mock service its
	// twins and the cells in real time run against (no BaseURL: none
	// could start, scaleOneMissing says why).
	bias            *resultsfile.Bias
	scaleOne        api.Client
	scaleOneMissing string
	// advised is the strategy "advised" per scenario.
	advised map[string]*resultsfile.AdvisedStrategy
	// ranNow is the units this attempt ran (the others a resumed
	// experiment took from its journal).
	ranNow map[plan.Unit]bool
}

// runUnits runs the units in order, round-robin over a cell's repetitions
// so that slow drift in the machine spreads over cells instead of biasing
// one, until they end, ctx does, or the journal fails (its error); a
// resumed experiment takes the units it has from its journal.
func (ex *execution) runUnits(ctx context.Context, units []plan.Unit) ([]resultsfile.RunRecord, error) {
	var runs []resultsfile.RunRecord
	start := time.Now()
	for i, u := range units {
		if ctx.Err() != nil {
			break
		}
		if rec, ok := ex.resumed(u, runs); ok {
			runs = append(runs, rec)
			continue
		}
		ex.progress.RunStarting(u, i, len(units), time.Since(start))
		rec := ex.runOne(ctx, u.Cell, u.Run)
		if ctx.Err() != nil {
			break // the run was cut short by the interruption: not a result
		}
		ex.ranNow[u] = true
		runs = append(runs, rec)
		if err := ex.journal(rec, false); err != nil {
			return runs, err
		}
		ex.progress.RunDone(rec, i+1, len(units), time.Since(start))
		if err := ex.twin(ctx, u, runs); err != nil {
			return runs, err
		}
	}
	return runs, nil
}

// journal keeps rec, a run or its twin, in the journal, if there is one
// (the calibration run alone keeps nothing).
func (ex *execution) journal(rec resultsfile.RunRecord, twin bool) error {
	j := ex.cfg.Journal
	if j == nil || ex.cfg.Calibration.Only {
		return nil
	}
	keep := j.Run
	if twin {
		keep = j.Twin
	}
	if err := keep(rec); err != nil {
		return fmt.Errorf("%w: %w", ErrJournal, err)
	}
	return nil
}

// runOne runs cell c once against the experiment's mock service, with the
// mock service's seed for run run.
func (ex *execution) runOne(ctx context.Context, c design.Cell, run int) resultsfile.RunRecord {
	if c.Strategy == design.Advised {
		failed := func(why string) resultsfile.RunRecord {
			return resultsfile.RunRecord{Cell: c, Run: run, Seed: plan.RunSeed(ex.cfg.Spec, run), Status: resultsfile.RunFailed, Reason: why}
		}
		switch a := ex.advised[c.Scenario]; {
		case a == nil:
			return failed("no advice: the probes did not run")
		case a.Failed != "":
			return failed("no advice: " + a.Failed)
		}
	}
	mock, scale, err := ex.at(c)
	if err != nil {
		return resultsfile.RunRecord{Cell: c, Run: run, Seed: plan.RunSeed(ex.cfg.Spec, run), Status: resultsfile.RunFailed, Reason: err.Error()}
	}
	return ex.runAt(ctx, mock, scale, c, run)
}
