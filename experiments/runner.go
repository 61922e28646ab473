package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// Progress reports the matrix's advance (or, with Calibrating, the
// calibration's: Done of Total rounds).
type Progress struct {
	// Advising, when set, names the scenario/dependency being probed for
	// the strategy "advised".
	Advising    string
	Calibrating bool
	Done, Total int
	Cell        Cell
	Run         int
	Elapsed     time.Duration
	Last        *RunRecord
}

// Runner executes an experiment against a running mock service.
type Runner struct {
	Spec       Spec
	Hypotheses []Hypothesis
	// Binary is the loadlab executable started for every client run.
	Binary string
	// Target is the mock service's base URL (required). Its time scale
	// must be the experiment's.
	Target string
	// ClientTarget, when set, is where the client runs send their calls
	// instead of Target (tests put a proxy there); admin requests, the
	// scrape and the reconciliation still go to Target.
	ClientTarget string
	AdminToken   string
	Progress     func(Progress)
	// MockConfig is the mock service's configuration, the source of each
	// cell's bound; zero means config.Default().
	MockConfig *config.Config
	// Wait is how long to wait for the mock service to answer (0: ask once).
	Wait time.Duration
	// Metrics, when set, receives the runner's own metrics.
	Metrics *RunnerMetrics
	// RunLimit, when > 0, replaces every run's wall-clock limit (by
	// default a generous multiple of its cell's Little's-law time).
	RunLimit time.Duration
	// The time-scale calibration: CalibrationRuns rounds (0: none) of
	// CalibrationStrategies (none: C2 and C4), healthy, at time scale 1 and
	// at the experiment's, on mock services of their own started with
	// StartMock. When a bias exceeds MaxBias (0: DefaultMaxBias) every
	// verdict is inconclusive, unless AcceptBias.
	CalibrationRuns       int
	CalibrationStrategies []string
	MaxBias               float64
	AcceptBias            bool
	StartMock             func(config.Config) (url string, stop func() error, err error)
	// CalibrateOnly stops after the calibration: no matrix, no verdicts.
	CalibrateOnly bool
	// Lock is the hypotheses' preregistration: under paired-v2 rules a run
	// of another design is labelled exploratory.
	Lock Lock

	// Restart, when set, restarts the mock service's process on the same
	// address (signal TERM or KILL), started with seed and its store:
	// phased scenarios with a restart need it.
	Restart func(ctx context.Context, signal string, seed uint32) (replayed string, err error)

	// Shard, when set, runs only that part of the matrix (ShardUnits); the
	// results say which, and are partial until merged with the others.
	Shard *Shard
	// RunDone, when set, is called with every run as it ends (loadlab
	// experiment --json-lines prints it).
	RunDone func(RunRecord)

	// advisedFiles are the strategy files of the advised cells, by
	// scenario, for the runs' --strategy-file.
	advisedFiles map[string]string
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
)

// Run executes the matrix and judges the hypotheses. A run that fails is
// recorded with its reason and the matrix goes on.
func (r *Runner) Run(ctx context.Context) (*Results, error) {
	mockCfg := config.Default()
	if r.MockConfig != nil {
		mockCfg = *r.MockConfig
	}
	if r.Target == "" {
		return nil, errors.New("experiment: no mock service target")
	}
	if r.Shard != nil {
		if err := r.Spec.CheckShardable(*r.Shard); err != nil {
			return nil, err
		}
	}
	if r.Spec.HasRestarts() && r.Restart == nil {
		return nil, fmt.Errorf("%w: a scenario restarts the mock service, and the runner cannot restart the one at %s (run without --target: the runner starts its own)", ErrMismatch, r.Target)
	}
	mock := api.Client{BaseURL: r.Target, Token: r.AdminToken}
	id, err := mock.DiscoverWait(ctx, api.PathEnrich, r.Wait)
	switch {
	case err != nil:
		return nil, fmt.Errorf("experiment: %w", err)
	case id == nil:
		return nil, fmt.Errorf("experiment: %s: %w (a mock service run with --instances serves each instance under /i/K: give --target BASE/i/K)", r.Target, ErrNotMock)
	}
	// A mock service at another time scale would make every figure wrong.
	if id.TimeScale != r.Spec.TimeScale {
		return nil, fmt.Errorf("%w: the mock service runs at time scale %g, the experiment at %g", ErrMismatch, id.TimeScale, r.Spec.TimeScale)
	}
	// Its admin routes must answer before the first run, not fail every run.
	if err := mock.Reset(ctx); err != nil {
		return nil, fmt.Errorf("%w: %v (give --admin-token)", ErrAdmin, err)
	}
	res := &Results{Format: ResultsFormat, Experiment: r.Spec, Hypotheses: r.Hypotheses, Environment: ReadEnvironment(),
		Target: r.Target, Started: time.Now().UTC()}
	res.Calibration = r.calibrate(ctx, mockCfg)
	if r.CalibrateOnly {
		res.Finished = time.Now().UTC()
		return res, ctx.Err()
	}
	res.Advised = r.adviseAll(ctx, mock, mockCfg)
	files, cleanup, err := writeAdvised(res.Advised)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	r.advisedFiles = files
	// Runs go round-robin over a cell's repetitions so slow drift in the
	// machine spreads over cells instead of biasing one; a shard runs its
	// part of the matrix in the same order.
	units := r.Spec.Units()
	if r.Shard != nil {
		units = r.Spec.ShardUnits(*r.Shard, mockCfg)
		res.Shard = &ShardRecord{Shard: *r.Shard, Units: units}
	}
	total := len(units)
	start := time.Now()
	done := 0
	for _, u := range units {
		c, run := u.Cell, u.Run
		if ctx.Err() != nil {
			break
		}
		if r.Progress != nil {
			r.Progress(Progress{Done: done, Total: total, Cell: c, Run: run, Elapsed: time.Since(start)})
		}
		rec := r.runOne(ctx, mock, mockCfg, c, run, res.Advised)
		if ctx.Err() != nil {
			break // the run was cut short by the interruption: not a result
		}
		res.Runs = append(res.Runs, rec)
		r.Metrics.observe(rec)
		if r.RunDone != nil {
			r.RunDone(rec)
		}
		done++
		if r.Progress != nil {
			r.Progress(Progress{Done: done, Total: total, Cell: c, Run: run, Elapsed: time.Since(start), Last: &rec})
		}
	}
	res.Finished = time.Now().UTC()
	res.Cells = Summaries(r.Spec, res.Runs, mockCfg, res.Advised)
	res.Lock = r.Lock
	res.Verdicts = Rejudge(res)
	if err := ctx.Err(); err != nil {
		// Interrupted: what was measured stands, over the completed runs,
		// and says it is partial.
		res.Partial = fmt.Sprintf("interrupted after %d of %d runs", len(res.Runs), total)
		return res, err
	}
	return res, nil
}

// Bounds of one run's wall-clock limit: a generous multiple of the time its
// cell's Little's-law bound allows (with one record in flight where the
// strategy leaves it to the runtime), plus a fixed allowance for starting.
const (
	runLimitFactor = 10
	runLimitBase   = 30 * time.Second
)

// runLimit is how long one run of cell c may take in real time before its
// child is killed and the run fails.
func (r *Runner) runLimit(mockCfg config.Config, c Cell, scale float64, advised map[string]*AdvisedStrategy) time.Duration {
	if r.RunLimit > 0 {
		return r.RunLimit
	}
	if r.Spec.Duration > 0 { // time-bounded: the duration, and a drain as long
		return runLimitBase + time.Duration(3*float64(r.Spec.Duration)*scale)
	}
	labSeconds := r.Spec.expectedLabSeconds(mockCfg, c, advised)
	if labSeconds == 0 {
		return runLimitBase * runLimitFactor
	}
	return runLimitBase + time.Duration(runLimitFactor*labSeconds*scale*float64(time.Second))
}

// expectedLabSeconds is how long a run of cell c should take in lab time:
// the duration of a time-bounded run, else the records at the cell's
// Little's-law bound (with one record in flight where the strategy leaves
// it to the runtime); 0 when the cell has no bound.
func (s Spec) expectedLabSeconds(mockCfg config.Config, c Cell, advised map[string]*AdvisedStrategy) float64 {
	if s.Duration > 0 {
		return s.Duration.Seconds()
	}
	st, _ := s.Strategy(c, advised)
	inFlight := max(st.RecordsInFlight, 1)
	if st.RecordsInFlight == records.UnboundedInFlight {
		inFlight = s.Records
	}
	b := CellBound(mockCfg, c.Scenario, st, inFlight, s.CallTimeout)
	if !(b.Bound > 0) {
		return 0
	}
	return float64(s.Records) / b.Bound
}

// runOne runs cell c once against the mock service the experiment runs,
// with the mock service's seed for run run.
func (r *Runner) runOne(ctx context.Context, mock api.Client, mockCfg config.Config, c Cell, run int, advised map[string]*AdvisedStrategy) RunRecord {
	if c.Strategy == Advised {
		a := advised[c.Scenario]
		switch {
		case a == nil:
			return RunRecord{Cell: c, Run: run, Seed: RunSeed(r.Spec, run), Status: RunFailed, Reason: "no advice: the probes did not run"}
		case a.Failed != "":
			return RunRecord{Cell: c, Run: run, Seed: RunSeed(r.Spec, run), Status: RunFailed, Reason: "no advice: " + a.Failed}
		}
	}
	return r.runAt(ctx, mock, r.Spec.TimeScale, mockCfg, c, run, advised)
}

// RunSeed is the mock service's seed for run k of every cell: the
// experiment's seed + k.
func RunSeed(spec Spec, run int) uint32 { return uint32(spec.Seed) + uint32(run) }

// runAt runs cell c once, as a CPU-limited child, against the mock service
// mock running at time scale scale: it waits for the mock service to finish
// earlier work, resets it with the run's seed, runs the child, waits for
// quiet again, scrapes, resolves the writes of unknown outcome, and
// reconciles the client's figures with the server's.
func (r *Runner) runAt(ctx context.Context, mock api.Client, scale float64, mockCfg config.Config, c Cell, run int, advised map[string]*AdvisedStrategy) (rec RunRecord) {
	rec = RunRecord{Cell: c, Run: run, Seed: RunSeed(r.Spec, run), Status: RunValid}
	t0 := time.Now()
	defer func() { rec.Seconds = time.Since(t0).Seconds() }() // rec is the named result
	fail := func(format string, a ...any) RunRecord {
		rec.Status, rec.Reason = RunFailed, fmt.Sprintf(format, a...)
		return rec
	}
	if err := mock.SetProfile(ctx, r.Spec.profileOf(c.Scenario)); err != nil {
		return fail("set profile: %v", err)
	}
	if r.Spec.HasPhased() { // an earlier phased run may have changed them
		if err := restoreShape(ctx, mock, mockCfg); err != nil {
			return fail("restore the stations' settings: %v", err)
		}
	}
	quietFor := quietLimit(mockCfg, scale)
	before := waitQuiet(ctx, mock, quietFor)
	rec.QuietBefore = &before
	if err := mock.ResetSeed(ctx, rec.Seed); err != nil {
		return fail("reset: %v", err)
	}
	setting, _ := r.Spec.CPU(c.CPU)
	lim, err := cpulimit.Prepare(setting.Limit(), fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err != nil {
		return fail("cpu limit %s: %v", c.CPU, err)
	}
	defer lim.Cleanup()
	rec.Mechanism = lim.Mechanism
	strategy := []string{"--strategy", c.Strategy}
	if c.Strategy == Advised {
		strategy = []string{"--strategy-file", r.advisedFiles[c.Scenario]}
	}
	args := []string{"run", "--target", r.clientTarget(mock), strategy[0], strategy[1],
		"--records", strconv.Itoa(r.Spec.Records), "--time-scale", strconv.FormatFloat(scale, 'g', -1, 64),
		"--call-timeout", r.Spec.CallTimeout.String(), "--permit-timeout", r.Spec.PermitTimeout.String(),
		"--reset=false", "--json", "--run-id", fmt.Sprintf("%s-%s-%s-%d-", c.Strategy, c.Scenario, c.CPU, run),
		"--sample-interval", sampleInterval(scale).String()}
	if r.Spec.Duration > 0 {
		args = append(args, "--duration", r.Spec.Duration.String())
	}
	driver, stopProxies, err := r.phased(ctx, mock, c, scale, &rec, &args)
	if err != nil {
		return fail("%v", err)
	}
	defer stopProxies()
	limit := r.runLimit(mockCfg, c, scale, advised)
	runCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(runCtx, r.Binary, args...)
	cmd.Env = append(os.Environ(), lim.Env...)
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
		return fail("client: killed at the run's wall-clock limit of %v", limit.Round(time.Second))
	}
	var exitErr *exec.ExitError
	if err != nil && !(errors.As(err, &exitErr) && exitErr.ExitCode() == 1) {
		return fail("client: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var cres records.Result
	if err := json.Unmarshal(stdout.Bytes(), &cres); err != nil {
		return fail("client output: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	after := waitQuiet(ctx, mock, quietFor)
	rec.QuietAfter = &after
	st, err := mock.Scrape(ctx)
	if err != nil {
		return fail("scrape: %v", err)
	}
	cres.Server = nil // the runner's own scrape is the record
	if run != 1 {
		cres.Timeline = nil // one run per cell keeps its timeline
	}
	cres.Timeline = downsample(cres.Timeline, maxTimelineSamples)
	unknown := resolveUnknown(ctx, mock, cres)
	rec.Client, rec.Server, rec.Unknown = &cres, &st, &unknown
	derive(&rec, scale)
	return rec
}

// clientTarget is where the child sends its calls: ClientTarget when set
// (a proxy in front of the mock service, say), else the mock service.
func (r *Runner) clientTarget(mock api.Client) string {
	if r.ClientTarget != "" {
		return r.ClientTarget
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
