// Package resultsfile owns the schema of results.json, everything an
// experiment produced, and its reading and writing: the data (Results,
// RunRecord with its typed RunStatus, CellSummary, Verdict with its typed
// Decision, the calibration's Bias and Calibration, the advised
// strategies, the merged shards, the attempts of a resumed experiment),
// the migration of results written by older runners (NormalizeResults),
// the file (ReadResults, WriteJSON) and both ends of loadlab experiment
// --json-lines (LineWriter, ReadResultsLog). What is computed from the
// data is experiments/judge's.
package resultsfile

import (
	"time"

	"github.com/loadlab/loadlab/client/advise"
	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/mockservice/api"
)

// ResultsFormat is the results.json format this runner writes: 2 keeps,
// for every run, the raw data its metrics, reconciliation and status are
// derived from. Results without it (the first results) keep no
// reconciliation; check re-judges their stored metrics.
const ResultsFormat = 2

// RunRecord is one client run of one cell.
type RunRecord struct {
	Cell design.Cell `json:"cell"`
	Run  int         `json:"run"`
	// Seed is the mock service's seed for the run (the system of record's
	// is derived from it, api.RecordsSeed): the experiment's seed + Run, the same in every cell of a
	// run, so cells are compared on the same draws.
	Seed uint32 `json:"seed"`
	// Status is RunValid, RunFailed, RunContaminated or RunInvalid; Reason
	// says why a run is not valid. Only valid runs enter statistics.
	Status RunStatus `json:"status"`
	Reason string    `json:"reason,omitempty"`
	// Failed is how results written before run statuses said a run failed;
	// ReadResults turns it into Status and Reason.
	Failed string `json:"failed,omitempty"`
	// Mechanism is how the CPU limit was applied, in words; MechanismKind
	// its kind (results written before it was kept have it from the
	// words, when they are read).
	Mechanism     string             `json:"mechanism"`
	MechanismKind cpulimit.Kind      `json:"mechanism_kind,omitempty"`
	Metrics       map[string]float64 `json:"metrics,omitempty"`
	// Client is the child's own result; Server the mock service's metrics
	// scraped after the run, once it was quiet.
	Client *records.Result `json:"client,omitempty"`
	Server *api.Stats      `json:"server,omitempty"`
	// WriteStation, when set, says the run went to virtual copies of
	// one's own dependencies (Server holds each copy's station under its
	// dependency's name) and names the write's: copies keep no store, so
	// the reconciliation compares every dependency's calls and the
	// write's refusals, not stored writes.
	WriteStation string `json:"write_station,omitempty"`
	// Real are the dependencies of such a run without a copy: their calls
	// went to real services, and are not reconciled.
	Real []string `json:"real,omitempty"`
	// QuietBefore is the wait for the mock service to finish earlier work
	// before the run's reset; QuietAfter the wait after the run, before the
	// scrape.
	QuietBefore *Quiet `json:"quiet_before,omitempty"`
	QuietAfter  *Quiet `json:"quiet_after,omitempty"`
	// Unknown is what the system of record answered for the writes of
	// unknown outcome (a raw observation); Reconciliation the client's and
	// the server's figures side by side.
	Unknown        *Resolution     `json:"unknown_writes_resolved,omitempty"`
	Reconciliation *Reconciliation `json:"reconciliation,omitempty"`
	// Faulted: the run's scenario injects network faults or restarts the
	// mock service, so records that fail are what it measures: the
	// client's exit 1 for them does not fail the run.
	Faulted bool `json:"faulted,omitempty"`
	// PhaseEvents are the changes the runner made during a phased run.
	PhaseEvents []PhaseEvent `json:"phase_events,omitempty"`
	Seconds     float64      `json:"wall_seconds"`
}

// Valid reports whether the run enters statistics and verdicts.
func (r RunRecord) Valid() bool { return r.Status == RunValid }

// normalize gives a run read from results written before run statuses its
// status: failed when it said so, else valid.
func (r *RunRecord) normalize() {
	if r.MechanismKind == "" {
		r.MechanismKind = cpulimit.KindOf(r.Mechanism)
	}
	if r.Status != "" {
		return
	}
	r.Status = RunValid
	if r.Failed != "" {
		r.Status, r.Reason = RunFailed, r.Failed
	}
}

// ValidRuns counts the valid runs of cell c.
func ValidRuns(runs []RunRecord, c design.Cell) int {
	n := 0
	for _, r := range runs {
		if r.Cell == c && r.Valid() {
			n++
		}
	}
	return n
}

// Results is everything an experiment produced: results.json.
type Results struct {
	// Format is ResultsFormat for results that keep the raw data of every
	// run; 0 for the first results.
	Format           int                 `json:"format,omitempty"`
	Experiment       design.Spec         `json:"experiment"`
	ExperimentFile   string              `json:"experiment_file"`
	ExperimentSHA256 string              `json:"experiment_sha256"`
	HypothesesFile   string              `json:"hypotheses_file"`
	HypothesesSHA256 string              `json:"hypotheses_sha256"`
	Lock             design.Lock         `json:"lock"`
	Hypotheses       []design.Hypothesis `json:"hypotheses"`
	Environment      Environment         `json:"environment"`
	Target           string              `json:"target"`
	Started          time.Time           `json:"started"`
	Finished         time.Time           `json:"finished"`
	Runs             []RunRecord         `json:"runs"`
	Cells            []CellSummary       `json:"cells"`
	Verdicts         []Verdict           `json:"verdicts"`
	// Partial, when set, says why the matrix did not run to its end; the
	// statistics and verdicts are over the runs that completed.
	Partial string `json:"partial,omitempty"`
	// Calibration is the measured time-scale bias; when it exceeds its
	// limit, unaccepted, every verdict is inconclusive.
	Calibration *Calibration `json:"calibration,omitempty"`
	// TimeScaleBias is the calibration cell by cell of results written
	// since it replaced Calibration: it gates each time-biased verdict by
	// the cells it reads.
	TimeScaleBias *Bias `json:"time_scale_bias,omitempty"`
	// Advised is, per scenario, the strategy "advised" and the probes and
	// advice it came from.
	Advised map[string]*AdvisedStrategy `json:"advised,omitempty"`
	// Shard, when set, says this is one shard's part of the matrix
	// (loadlab experiment --shard): partial until loadlab merge combines
	// it with the others.
	Shard *plan.ShardRecord `json:"shard,omitempty"`
	// Shards, in merged results, is what each shard ran and saw.
	Shards []MergedShard `json:"shards,omitempty"`
	// Attempts, in results of a resumed experiment, is what each process
	// that ran part of it measured, in order.
	Attempts []Attempt `json:"attempts,omitempty"`
}

// CellSummary is a cell's statistics over its runs.
type CellSummary struct {
	Cell design.Cell `json:"cell"`
	// Runs is every run of the cell; Valid those that enter statistics;
	// Excluded the others, with their reasons ("run 3: invalid: …").
	Runs       int             `json:"runs"`
	Valid      int             `json:"valid_runs"`
	Excluded   []string        `json:"excluded,omitempty"`
	Mechanism  string          `json:"mechanism"`
	Stats      map[string]Stat `json:"stats"`
	Bound      plan.Bound      `json:"bound"`
	Efficiency float64         `json:"efficiency"`
}

// Summary is cell c's summary, if the results have one.
func (r *Results) Summary(c design.Cell) (CellSummary, bool) {
	for _, s := range r.Cells {
		if s.Cell == c {
			return s, true
		}
	}
	return CellSummary{}, false
}

// Stat is the median and range of a metric over a cell's runs.
type Stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// Environment records where the experiment ran.
type Environment struct {
	GoVersion  string           `json:"go_version"`
	GOMAXPROCS int              `json:"gomaxprocs"`
	NumCPU     int              `json:"num_cpu"`
	Runtime    cpulimit.Runtime `json:"runtime"`
	CPUModel   string           `json:"cpu_model"`
	Kernel     string           `json:"kernel"`
	GitCommit  string           `json:"git_commit,omitempty"`
	Hostname   string           `json:"hostname"`
	// BinarySHA256 is the SHA-256 of the runner's own executable (which
	// every client run re-executes): loadlab merge refuses shards run by
	// different binaries.
	BinarySHA256 string `json:"binary_sha256,omitempty"`
}

// AdvisedStrategy is the strategy "advised" for one scenario, with the
// probes and the advice it came from (raw data, in results.json).
type AdvisedStrategy struct {
	Scenario string `json:"scenario"`
	// TimeScale is the experiment's: the probes ran in real time against
	// the mock service at this scale, so the advice's rates and times are
	// per real second (a lab second is a real second / TimeScale).
	TimeScale float64                 `json:"time_scale"`
	Strategy  strategy.FileStrategy   `json:"strategy"`
	Advice    advise.Advice           `json:"advice"`
	Probes    map[string]probe.Result `json:"probes"`
	// From is the strategy file it was read from (advise.file), if any:
	// then there are no probes, and Advice is what the file recorded.
	From string `json:"from,omitempty"`
	// Failed says why no strategy could be advised; the scenario's
	// advised cells then fail every run.
	Failed string `json:"failed,omitempty"`
	// Shortened, when set, says the probes ran shorter than the design's,
	// and why.
	Shortened string `json:"shortened,omitempty"`
}

// MergedShard is what merged results keep of each shard: where it came
// from, what its runner saw (GOMAXPROCS, NumCPU, the CPU quota, the
// host), its target, its time and its calibration.
type MergedShard struct {
	Index       int          `json:"index"`
	Source      string       `json:"source"`
	Environment Environment  `json:"environment"`
	Target      string       `json:"target"`
	Started     time.Time    `json:"started"`
	Finished    time.Time    `json:"finished"`
	Runs        int          `json:"runs"`
	Calibration *Calibration `json:"calibration,omitempty"`
	// Attempts is the shard's processes, when it was resumed.
	Attempts []Attempt `json:"attempts,omitempty"`
}

// Attempt is one process's part of a resumed experiment: when it started
// and ended, where it ran, and how many of the results' runs and runs at
// time scale 1 it measured.
type Attempt struct {
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	Hostname string    `json:"hostname,omitempty"`
	Runs     int       `json:"runs"`
	Twins    int       `json:"twins,omitempty"`
}
