package judge

import (
	"fmt"
	"math"

	"github.com/loadlab/loadlab/experiments/design"
)

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

// gate makes every verdict inconclusive when the calibration found a bias
// beyond its limit that the user did not accept.
func gate(vs []Verdict, cal *Calibration) []Verdict {
	why := cal.Exceeded()
	if why == "" || cal.Accepted {
		return vs
	}
	out := make([]Verdict, len(vs))
	for i, v := range vs {
		v.Verdict, v.Note = Inconclusive, "inconclusive: "+why
		out[i] = v
	}
	return out
}

// Rejudge decides the verdicts of results from their runs' metrics, as the
// runner does: judged, gated by the calibration, labelled exploratory when
// the design is not the preregistered one.
func Rejudge(r *Results) []Verdict {
	rules := design.RulesRangeV1
	if len(r.Hypotheses) > 0 {
		rules = r.Hypotheses[0].Rules
	}
	vs := Verdicts(r.Hypotheses, r.Runs, r.Experiment.Runs)
	if r.TimeScaleBias != nil {
		vs = gateByCell(vs, r.Hypotheses, r.TimeScaleBias, r.Experiment, r.Runs)
	} else {
		vs = gate(vs, r.Calibration)
	}
	return label(vs, design.Exploratory(r.Lock, r.Experiment, rules))
}

// label marks every verdict exploratory with the reason why (none when
// why is empty).
func label(vs []Verdict, why string) []Verdict {
	if why == "" {
		return vs
	}
	out := make([]Verdict, len(vs))
	for i, v := range vs {
		v.Exploratory = why
		out[i] = v
	}
	return out
}
