package experiments

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/api"
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
	Client  *records.Result `json:"client,omitempty"`
	Server  *api.Stats      `json:"server,omitempty"`
	Seconds float64         `json:"wall_seconds"`
}

// Run statuses.
const (
	RunOK     = "ok"
	RunFailed = "failed"
)

// Status is RunOK, or RunFailed when the run produced no result.
func (r RunRecord) Status() string {
	if r.Failed != "" {
		return RunFailed
	}
	return RunOK
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
	// Partial, when set, says why the matrix did not run to its end; the
	// statistics and verdicts are over the runs that completed.
	Partial string `json:"partial,omitempty"`
	// Calibration is the measured time-scale bias; when it exceeds its
	// limit, unaccepted, every verdict is inconclusive.
	Calibration *Calibration `json:"calibration,omitempty"`
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

func (r *Results) summary(c Cell) (CellSummary, bool) {
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
	return os.WriteFile(path, append(b, '\n'), 0o644)
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
	return &r, nil
}
