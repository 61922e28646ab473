package resultsfile

import "github.com/loadlab/loadlab/experiments/design"

// Decision is what a hypothesis, or one of its cells, was judged.
type Decision string

// Decisions.
const (
	Supported    Decision = "supported"
	Refuted      Decision = "refuted"
	Inconclusive Decision = "inconclusive"
)

// Verdict is a hypothesis judged against the runs.
type Verdict struct {
	ID        string           `json:"id"`
	Claim     string           `json:"claim"`
	Verdict   Decision         `json:"verdict"`
	Op        design.Op        `json:"op"`
	Threshold design.Threshold `json:"threshold"`
	Rules     design.Rules     `json:"rules,omitempty"`
	Cells     []CellVerdict    `json:"cells"`
	Note      string           `json:"note,omitempty"`
	// ValidRuns is, per cell the verdict reads (by its name), how many of
	// its runs were valid (paired-v2 rules).
	ValidRuns map[string]int `json:"valid_runs,omitempty"`
	// Exploratory, when set, says how the run differs from the design the
	// hypotheses were preregistered with: the verdict is computed but is
	// not a finding.
	Exploratory string `json:"exploratory,omitempty"`
	// Calibration labels a verdict whose metric a time scale can bias by
	// what the calibration said of the cells it reads: "" (within the
	// limit, or nothing to calibrate), LabelUncalibrated,
	// LabelProvisional, LabelBeyond, LabelHolds, LabelBiasAccepted or
	// LabelUncalibratedAccepted.
	Calibration CalibrationLabel `json:"calibration,omitempty"`
}

// CellVerdict is the judgement in one cell: the value's median and range
// (under paired rules with a versus cell, of the paired per-run ratios or
// differences), and an interval of the median (information, not the
// verdict rule): paired-v2's 95% bootstrap, paired-v3's order-statistic
// interval with its coverage.
type CellVerdict struct {
	Cell      design.Cell `json:"cell"`
	Median    float64     `json:"median"`
	Min       float64     `json:"min"`
	Max       float64     `json:"max"`
	Runs      int         `json:"runs"`
	Bootstrap *Bootstrap  `json:"bootstrap,omitempty"`
	// Interval (paired-v3 rules) is the median's distribution-free
	// order-statistic interval, with its coverage.
	Interval *Interval `json:"interval,omitempty"`
	Verdict  Decision  `json:"verdict"`
	Note     string    `json:"note,omitempty"`
}

// Bootstrap is a 95% percentile-bootstrap interval of a median.
type Bootstrap struct {
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Resample int     `json:"resamples"`
}

// Interval is a distribution-free interval of a median: the k-th smallest
// and k-th largest of n values cover the median of the distribution they
// were drawn from (independently, continuous) with probability Coverage =
// 1 − 2·P(Binomial(n, ½) < k), whatever that distribution is.
type Interval struct {
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Coverage float64 `json:"coverage"`
}

// CalibrationLabel is what the calibration says of a verdict on a metric
// a time scale can bias ("" when its cells' biases are within the limit).
type CalibrationLabel string

// Calibration labels of a verdict (Verdict.Calibration).
const (
	// LabelUncalibrated: a cell it reads is not calibrated by the
	// experiment's plan (or the calibration was turned off).
	LabelUncalibrated CalibrationLabel = "uncalibrated"
	// LabelProvisional: a cell it reads should have been calibrated and
	// was not, or its bias interval straddles the limit: the verdict is
	// not final (the command exits 1).
	LabelProvisional CalibrationLabel = "provisional"
	// LabelBeyond: a cell it reads has a bias beyond the limit: the
	// verdict is inconclusive.
	LabelBeyond CalibrationLabel = "bias beyond the limit"
	// LabelBiasAccepted: judged over a bias beyond the limit, accepted.
	LabelBiasAccepted CalibrationLabel = "bias accepted"
	// LabelUncalibratedAccepted: provisional, accepted as final.
	LabelUncalibratedAccepted CalibrationLabel = "uncalibrated, accepted"
	// LabelHolds: a cell it reads has a bias beyond the limit or
	// unresolved, and the verdict is the same at every bias its cells'
	// pairs allow: final.
	LabelHolds CalibrationLabel = "holds across the bias"
)
