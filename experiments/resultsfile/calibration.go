package resultsfile

import (
	"fmt"
	"math"

	"github.com/loadlab/loadlab/experiments/design"
)

// Bias is an experiment's time-scale calibration, cell by cell: runs 1 to
// Pairs of every calibrated cell were run again at time scale 1 with the
// same seed (Twins, the raw data), and each cell's bias is the median of
// its pairs' rate ratios − 1, with the median's order-statistic interval
// (Measured, derived: loadlab check recomputes it). It gates only the
// verdicts whose metrics a time scale can bias, each by the cells it
// reads.
type Bias struct {
	TimeScale float64 `json:"time_scale"`
	Pairs     int     `json:"pairs"`
	MaxBias   float64 `json:"max_bias"`
	// Cells are the calibrated cells: the plan (design.CalibratedCells).
	Cells    []design.Cell `json:"cells,omitempty"`
	Twins    []RunRecord   `json:"twins,omitempty"`
	Measured []CellBias    `json:"measured,omitempty"`
	// Skipped says why nothing was calibrated, when nothing was asked: the
	// experiment runs at time scale 1 (nothing to calibrate), or with no
	// pairs (its time-biased verdicts are uncalibrated).
	Skipped string `json:"skipped,omitempty"`
	// Incomplete says why a calibration that was asked for did not
	// complete (a mock service that did not start, an interruption); the
	// verdicts it would have gated are provisional.
	Incomplete string `json:"incomplete,omitempty"`
	// Accepted: biases beyond the limit are judged anyway
	// (--accept-bias); AcceptedUncalibrated: verdicts without a measured
	// bias are final (--accept-uncalibrated). AcceptedBy says when the
	// acceptance came after the run (loadlab check).
	Accepted             bool   `json:"accepted,omitempty"`
	AcceptedUncalibrated bool   `json:"accepted_uncalibrated,omitempty"`
	AcceptedBy           string `json:"accepted_by,omitempty"`
}

// BiasState is what a cell's measured bias says against the limit.
type BiasState string

// Bias states, from the cell's interval: within the limit on both sides,
// beyond it on one, straddling it (unresolved), or not measured (no valid
// pair).
const (
	BiasWithin     BiasState = "within"
	BiasBeyond     BiasState = "beyond"
	BiasUnresolved BiasState = "unresolved"
	BiasUnmeasured BiasState = "unmeasured"
)

// CellBias is one calibrated cell's bias.
type CellBias struct {
	Cell design.Cell `json:"cell"`
	// Ratios are the valid pairs' accepted records per lab second at the
	// time scale ÷ at time scale 1, in run order.
	Ratios []float64 `json:"ratios"`
	// Bias is the median ratio − 1; Interval the median's interval − 1
	// (nil under 2 pairs).
	Bias     float64   `json:"bias"`
	Interval *Interval `json:"interval,omitempty"`
	State    BiasState `json:"state"`
}

// Worst is the calibrated cell whose bias is largest in size, and
// whether there is one.
func (b *Bias) Worst() (CellBias, bool) {
	var worst CellBias
	found := false
	for _, m := range b.Measured {
		if len(m.Ratios) > 0 && (!found || math.Abs(m.Bias) > math.Abs(worst.Bias)) {
			worst, found = m, true
		}
	}
	return worst, found
}

// Calibration is the measured bias of an experiment's time scale: how much
// the accepted rate per lab second of a healthy run at the experiment's
// time scale differs from the same run at time scale 1, where a fixed
// real-time cost per call (a round trip, timers) weighs least.
type Calibration struct {
	TimeScale float64 `json:"time_scale"`
	Runs      int     `json:"runs"`
	MaxBias   float64 `json:"max_bias"`
	CPU       string  `json:"cpu"`
	// Accepted: the user accepted a bias beyond MaxBias (--accept-bias);
	// AcceptedBy says when it was accepted after the run (loadlab check).
	Accepted   bool           `json:"accepted"`
	AcceptedBy string         `json:"accepted_by,omitempty"`
	Strategies []StrategyBias `json:"strategies"`
	// Skipped says why the bias was not measured, when it was not.
	Skipped string `json:"skipped,omitempty"`
}

// StrategyBias is one strategy's healthy runs at both time scales.
type StrategyBias struct {
	Strategy string `json:"strategy"`
	// Accepted records per lab second.
	AtOne   Stat `json:"at_time_scale_1"`
	AtScale Stat `json:"at_time_scale"`
	// Bias is median at the time scale / median at 1 − 1; Unmeasured when
	// either side had no valid run (then Bias is 0 and means nothing).
	Bias       float64  `json:"bias"`
	Unmeasured bool     `json:"unmeasured,omitempty"`
	Failed     []string `json:"failed,omitempty"`
}

// Exceeded names the largest bias beyond MaxBias, or "" when every bias
// is within it. A strategy measured in no run counts as beyond.
func (c *Calibration) Exceeded() string {
	if c == nil || c.Skipped != "" {
		return ""
	}
	worst, name := 0.0, ""
	for _, s := range c.Strategies {
		b := math.Abs(s.Bias)
		if s.Unmeasured || math.IsNaN(b) {
			return fmt.Sprintf("time-scale bias of %s not measured (%d runs failed)", s.Strategy, len(s.Failed))
		}
		if b > c.MaxBias && b > worst {
			worst, name = b, s.Strategy
		}
	}
	if name == "" {
		return ""
	}
	return fmt.Sprintf("time-scale bias %+.1f%% for %s at time scale %g (limit %.1f%%)",
		100*c.bias(name), name, c.TimeScale, 100*c.MaxBias)
}

func (c *Calibration) bias(strategy string) float64 {
	for _, s := range c.Strategies {
		if s.Strategy == strategy {
			return s.Bias
		}
	}
	return math.NaN()
}
