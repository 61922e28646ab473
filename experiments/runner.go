package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client"
	"github.com/loadlab/loadlab/mockservice"
)

// RunRecord is one client run of one cell.
type RunRecord struct {
	Cell Cell `json:"cell"`
	Run  int  `json:"run"`
	// Failed is the reason the run produced no result; empty on success.
	Failed string `json:"failed,omitempty"`
	// Mechanism is how the CPU limit was applied.
	Mechanism string             `json:"mechanism"`
	Metrics   map[string]float64 `json:"metrics,omitempty"`
	// Client is the child's own result; Server the mock service's metrics
	// scraped after the run.
	Client  *client.Result     `json:"client,omitempty"`
	Server  *mockservice.Stats `json:"server,omitempty"`
	Seconds float64            `json:"wall_seconds"`
}

// Environment records where the experiment ran.
type Environment struct {
	GoVersion  string         `json:"go_version"`
	GOMAXPROCS int            `json:"gomaxprocs"`
	NumCPU     int            `json:"num_cpu"`
	Runtime    client.Runtime `json:"runtime"`
	CPUModel   string         `json:"cpu_model"`
	Kernel     string         `json:"kernel"`
	GitCommit  string         `json:"git_commit,omitempty"`
	Hostname   string         `json:"hostname"`
}

// Results is everything an experiment produced: results.json.
type Results struct {
	Experiment       Spec          `json:"experiment"`
	ExperimentFile   string        `json:"experiment_file"`
	ExperimentSHA256 string        `json:"experiment_sha256"`
	HypothesesFile   string        `json:"hypotheses_file"`
	HypothesesSHA256 string        `json:"hypotheses_sha256"`
	Lock             Lock          `json:"lock"`
	Hypotheses       []Hypothesis  `json:"hypotheses"`
	Environment      Environment   `json:"environment"`
	Target           string        `json:"target"`
	Started          time.Time     `json:"started"`
	Finished         time.Time     `json:"finished"`
	Runs             []RunRecord   `json:"runs"`
	Cells            []CellSummary `json:"cells"`
	Verdicts         []Verdict     `json:"verdicts"`
}

// CellSummary is a cell's statistics over its runs.
type CellSummary struct {
	Cell       Cell            `json:"cell"`
	Runs       int             `json:"runs"`
	Failed     int             `json:"failed"`
	Failures   []string        `json:"failures,omitempty"`
	Mechanism  string          `json:"mechanism"`
	Stats      map[string]Stat `json:"stats"`
	Bound      Bound           `json:"bound"`
	Efficiency float64         `json:"efficiency"`
}

// Progress reports the matrix's advance.
type Progress struct {
	Done, Total int
	Cell        Cell
	Run         int
	Elapsed     time.Duration
	Last        *RunRecord
}

// Runner executes an experiment.
type Runner struct {
	Spec       Spec
	Hypotheses []Hypothesis
	// Binary is the loadlab executable started for every client run.
	Binary string
	// Target is the mock service's base URL; empty starts one in-process
	// on loopback for the experiment.
	Target     string
	AdminToken string
	Progress   func(Progress)
	// MockConfig is the in-process mock service's configuration (the
	// bound's source too); zero means mockservice.DefaultConfig().
	MockConfig *mockservice.Config
	// Wait is how long to wait for the mock service to answer (0: ask once).
	Wait time.Duration
	// Metrics, when set, receives the runner's own metrics.
	Metrics *RunnerMetrics
}

// ErrMismatch: the target mock service is not set up as the experiment needs.
var ErrMismatch = errors.New("experiment: mock service mismatch")

// waitHealthy asks the mock service's /healthz until it answers or wait
// has passed.
func waitHealthy(ctx context.Context, admin mockservice.Admin, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := admin.Healthy(ctx)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Run executes the matrix and judges the hypotheses. A run that fails is
// recorded with its reason and the matrix goes on.
func (r *Runner) Run(ctx context.Context) (*Results, error) {
	mockCfg := mockservice.DefaultConfig()
	if r.MockConfig != nil {
		mockCfg = *r.MockConfig
	}
	mockCfg.Seed, mockCfg.TimeScale = r.Spec.Seed, r.Spec.TimeScale
	target := r.Target
	if target == "" {
		mockCfg.Listen = "127.0.0.1:0"
		_, url, stop, err := mockservice.Start(mockCfg)
		if err != nil {
			return nil, fmt.Errorf("experiment: %w", err)
		}
		defer stop()
		target = url
	}
	admin := mockservice.Admin{BaseURL: target, Token: r.AdminToken, HTTP: &http.Client{Timeout: 10 * time.Second}}
	if err := waitHealthy(ctx, admin, r.Wait); err != nil {
		return nil, fmt.Errorf("experiment: mock service: %w", err)
	}
	// A mock service at another time scale would make every figure wrong.
	if st, err := mockservice.Scrape(ctx, admin.HTTP, target); err != nil {
		return nil, fmt.Errorf("experiment: mock service: %w", err)
	} else if st.TimeScale != r.Spec.TimeScale {
		return nil, fmt.Errorf("%w: the mock service runs at time scale %g, the experiment at %g", ErrMismatch, st.TimeScale, r.Spec.TimeScale)
	}
	res := &Results{Experiment: r.Spec, Hypotheses: r.Hypotheses, Environment: ReadEnvironment(),
		Target: target, Started: time.Now().UTC()}
	cells := r.Spec.Cells()
	total := len(cells) * r.Spec.Runs
	start := time.Now()
	done := 0
	// Runs go round-robin over a cell's repetitions so slow drift in the
	// machine spreads over cells instead of biasing one.
	for run := 1; run <= r.Spec.Runs; run++ {
		for _, c := range cells {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			if r.Progress != nil {
				r.Progress(Progress{Done: done, Total: total, Cell: c, Run: run, Elapsed: time.Since(start)})
			}
			rec := r.runOne(ctx, admin, target, c, run)
			res.Runs = append(res.Runs, rec)
			r.Metrics.observe(rec, r.Spec.TimeScale)
			done++
			if r.Progress != nil {
				r.Progress(Progress{Done: done, Total: total, Cell: c, Run: run, Elapsed: time.Since(start), Last: &rec})
			}
		}
	}
	res.Finished = time.Now().UTC()
	res.Cells = Summaries(r.Spec, res.Runs, mockCfg)
	res.Verdicts = Judge(r.Hypotheses, res.Runs)
	return res, nil
}

func (r *Runner) runOne(ctx context.Context, admin mockservice.Admin, target string, c Cell, run int) (rec RunRecord) {
	rec = RunRecord{Cell: c, Run: run}
	t0 := time.Now()
	defer func() { rec.Seconds = time.Since(t0).Seconds() }() // rec is the named result
	fail := func(format string, a ...any) RunRecord {
		rec.Failed = fmt.Sprintf(format, a...)
		return rec
	}
	if err := admin.SetProfile(ctx, c.Scenario); err != nil {
		return fail("set profile: %v", err)
	}
	if err := admin.Reset(ctx); err != nil {
		return fail("reset: %v", err)
	}
	setting, _ := r.Spec.CPU(c.CPU)
	lim, err := prepareLimit(setting, fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err != nil {
		return fail("cpu limit %s: %v", c.CPU, err)
	}
	defer lim.cleanup()
	rec.Mechanism = lim.mechanism
	args := []string{"run", "--target", target, "--strategy", c.Strategy,
		"--records", strconv.Itoa(r.Spec.Records), "--time-scale", strconv.FormatFloat(r.Spec.TimeScale, 'g', -1, 64),
		"--call-timeout", r.Spec.CallTimeout.String(), "--permit-timeout", r.Spec.PermitTimeout.String(),
		"--reset=false", "--json", "--run-id", fmt.Sprintf("%s-%s-%s-%d-", c.Strategy, c.Scenario, c.CPU, run),
		"--sample-interval", sampleInterval(r.Spec.TimeScale).String()}
	cmd := exec.CommandContext(ctx, r.Binary, args...)
	cmd.Env = append(os.Environ(), lim.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !(errors.As(err, &exitErr) && exitErr.ExitCode() == 1) {
		return fail("client: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var cres client.Result
	if err := json.Unmarshal(stdout.Bytes(), &cres); err != nil {
		return fail("client output: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	st, err := mockservice.Scrape(sctx, &http.Client{}, target)
	cancel()
	if err != nil {
		return fail("scrape: %v", err)
	}
	cres.Server = nil // the runner's own scrape is the record
	if run != 1 {
		cres.Timeline = nil // one run per cell keeps its timeline
	}
	cres.Timeline = downsample(cres.Timeline, maxTimelineSamples)
	rec.Client, rec.Server = &cres, &st
	rec.Metrics = metricsOf(cres, st, r.Spec.TimeScale)
	return rec
}

const maxTimelineSamples = 600

// downsample keeps at most n evenly spaced samples.
func downsample(xs []client.Sample, n int) []client.Sample {
	if len(xs) <= n {
		return xs
	}
	out := make([]client.Sample, 0, n)
	for i := range n {
		out = append(out, xs[i*len(xs)/n])
	}
	return out
}

// sampleInterval samples in-flight calls about every 20 lab milliseconds.
func sampleInterval(scale float64) time.Duration {
	return max(time.Duration(float64(20*time.Millisecond)*scale), time.Millisecond)
}

// metricsOf flattens a run into the named metrics hypotheses use; times and
// rates are in lab seconds.
func metricsOf(c client.Result, s mockservice.Stats, scale float64) map[string]float64 {
	m := map[string]float64{
		"accepted_per_second":       c.AcceptedPerSecond * scale,
		"duration_seconds":          c.DurationSeconds / scale,
		"write_rejections":          float64(c.WriteRejections),
		"peak_concurrent_writes":    float64(s.Stations[mockservice.Records].HighWater.Offered),
		"peak_in_flight_enrichment": float64(c.PeakInFlight[client.Enrichment]),
		"peak_in_flight_records":    float64(c.PeakInFlight[client.Records]),
		"incomplete":                float64(c.Incomplete),
		"incomplete_fraction":       float64(c.Incomplete) / float64(c.Records),
		"complete":                  float64(c.Complete),
		"write_rejected":            float64(c.WriteRejected),
		"failed":                    float64(c.Failed),
		"permit_timeouts":           float64(c.PermitTimeouts),
		"call_timeouts":             float64(c.CallTimeouts),
		"errors":                    float64(c.Errors),
		"gomaxprocs":                float64(c.GOMAXPROCS),
		"num_cpu":                   float64(c.NumCPU),
		"records_in_flight":         float64(c.RecordsInFlight),
		"peak_records_in_flight":    float64(c.PeakRecordsInFlight),
		"stored_writes":             float64(s.StoredWrites),
	}
	if c.CPUQuota != nil {
		m["cpu_quota"] = *c.CPUQuota
	}
	return m
}

// Summaries computes every cell's statistics and bound.
func Summaries(spec Spec, runs []RunRecord, mockCfg mockservice.Config) []CellSummary {
	var out []CellSummary
	for _, c := range spec.Cells() {
		cs := CellSummary{Cell: c, Stats: map[string]Stat{}}
		byMetric := map[string][]float64{}
		for _, r := range runs {
			if r.Cell != c {
				continue
			}
			cs.Runs++
			if cs.Mechanism == "" {
				cs.Mechanism = r.Mechanism
			}
			if r.Failed != "" {
				cs.Failed++
				cs.Failures = append(cs.Failures, fmt.Sprintf("run %d: %s", r.Run, r.Failed))
				continue
			}
			for k, v := range r.Metrics {
				byMetric[k] = append(byMetric[k], v)
			}
		}
		for k, vals := range byMetric {
			cs.Stats[k] = Summarize(vals)
		}
		s, _ := client.ParseStrategy(c.Strategy)
		inFlight := s.RecordsInFlight
		if st, ok := cs.Stats["records_in_flight"]; ok {
			inFlight = int(st.Median)
		}
		cs.Bound = CellBound(mockCfg, c.Scenario, s, inFlight, spec.CallTimeout)
		if st, ok := cs.Stats["accepted_per_second"]; ok && cs.Bound.Bound > 0 {
			cs.Efficiency = st.Median / cs.Bound.Bound
		}
		out = append(out, cs)
	}
	return out
}

// ReadEnvironment describes the machine and the runner process.
func ReadEnvironment() Environment {
	e := Environment{GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
		Runtime: client.ReadRuntime()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		e.GitCommit = strings.TrimSpace(string(out))
	}
	e.Hostname, _ = os.Hostname()
	return e
}

// WriteJSON writes v as indented JSON to path.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadResults loads a results.json.
func ReadResults(path string) (*Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r Results
	if err := json.NewDecoder(io.LimitReader(f, 1<<30)).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}
