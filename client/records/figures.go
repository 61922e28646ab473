package records

import "github.com/loadlab/loadlab/client/threshold"

// Figures are the result's figures a threshold can name: the top-level
// numbers of its JSON (complete, write_rejected, write_unknown, failed,
// accepted_per_lab_second, call_timeouts, …), and rejected (records
// refused: write_rejected + step_rejected) and accepted_per_second
// (accepted records per lab second: per second at time scale 1).
// Percentages are of Records.
func (r Result) Figures() map[string]float64 {
	f := threshold.Figures(r)
	f["step_rejected"] = float64(r.StepRejected) // omitted from the JSON when 0
	f["rejected"] = float64(r.WriteRejected + r.StepRejected)
	f["accepted_per_second"] = r.AcceptedPerLabSecond
	return f
}
