// Package judge turns what an experiment measured into what it found, as
// pure functions over stored data: each run's metrics, its reconciliation
// of the client's figures with the server's, and its status (derive,
// reconcile); each cell's statistics and bound; the verdicts on the
// preregistered hypotheses, gated by the time-scale calibration; the
// check that recomputes all of them from a results file; and the merge of
// shards into what one machine would have written. It also owns the
// results' data: RunRecord, Results, Verdict. It runs nothing.
package judge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/atomicfile"
)

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

// WriteJSON writes v as indented JSON to path.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'))
}

// maxResultsBytes bounds what ReadResults reads.
const maxResultsBytes = 1 << 30

// ReadResults loads a results.json.
func ReadResults(path string) (*Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r Results
	if err := json.NewDecoder(io.LimitReader(f, maxResultsBytes)).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return NormalizeResults(&r), nil
}

// ErrNoResultsLine: a log without the line of an experiment's results.
var ErrNoResultsLine = errors.New(`no results line ({"kind":"results",...})`)

// ReadResultsLog reads the results of a loadlab experiment --json-lines
// log: its last {"kind":"results",…} line. Other lines (the runner's
// progress on stderr, interleaved in a pod's log) are skipped.
func ReadResultsLog(path string) (*Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), maxResultsBytes)
	var last []byte
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if bytes.HasPrefix(line, []byte(`{"kind":"results",`)) {
			last = append(last[:0], line...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if last == nil {
		return nil, fmt.Errorf("%s: %w: is it an experiment's JSON-lines log, and did the experiment end?", path, ErrNoResultsLine)
	}
	var line struct {
		Results *Results `json:"results"`
	}
	if err := json.Unmarshal(last, &line); err != nil || line.Results == nil {
		return nil, errors.Join(fmt.Errorf("%s: the results line does not decode", path), err)
	}
	return NormalizeResults(line.Results), nil
}

// NormalizeResults brings results decoded from JSON written by an older
// runner to the current shape (run statuses, valid runs per cell), as
// ReadResults does.
func NormalizeResults(r *Results) *Results {
	for i := range r.Runs {
		r.Runs[i].normalize()
	}
	if r.Format < ResultsFormat { // cells written before they counted valid runs
		for i, c := range r.Cells {
			r.Cells[i].Valid = validRuns(r.Runs, c.Cell)
		}
	}
	return r
}
