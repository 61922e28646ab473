package compare

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/loadresult"
	"github.com/loadlab/loadlab/experiments/models"
)

// AdmissionLoad is a real run of an admission scenario, with the model's
// run of the same scenario beside it when asked.
type AdmissionLoad struct {
	// Scenario is the admission model's scenario: the generator sends its
	// schedule, and its endpoint (workers, service time, queue) is the one
	// the result describes and AdmissionEndpoint serves.
	Scenario models.AdmissionScenario
	// Config is the generator's configuration but its Schedule and
	// Endpoint, which are Scenario's (Generator sets them).
	Config loadgen.Config
	// Model: also run the model, and set it beside the real run.
	Model bool
}

// Generator is the generator's configuration: Config with Scenario's
// schedule and endpoint.
func (a AdmissionLoad) Generator() loadgen.Config {
	cfg := a.Config
	cfg.Schedule, cfg.Endpoint = Schedule(a.Scenario), Endpoint(a.Scenario)
	return cfg
}

// Validate names the first bad field (a *field.Error): the scenario's as
// the model names them (its JSON keys: "service_time_s"), then the
// generator's as loadgen.Config.Validate does ("max_in_flight"; the
// schedule's fields are the scenario's, under the same names).
func (a AdmissionLoad) Validate() error {
	if err := a.Scenario.Validate(); err != nil {
		return ModelField(err)
	}
	return a.Generator().Validate()
}

// AdmissionResult is a real run's result and, when asked, the model's of
// the same scenario. Its JSON is the real run's, with the model's under
// "model" when there is one.
type AdmissionResult struct {
	loadgen.Result
	Model *models.AdmissionResult `json:"model,omitempty"`
}

// RunAdmissionLoad sends a's schedule to a.Config.Target (loadgen.Load:
// its errors are Load's) and, when a.Model, runs the model beside it.
func RunAdmissionLoad(ctx context.Context, a AdmissionLoad) (AdmissionResult, error) {
	if err := a.Validate(); err != nil {
		return AdmissionResult{}, fmt.Errorf("compare: %w", err)
	}
	res, err := loadgen.Load(ctx, a.Generator())
	if err != nil {
		return AdmissionResult{}, err
	}
	out := AdmissionResult{Result: res}
	if a.Model {
		m, err := models.SimulateAdmission(a.Scenario)
		if err != nil {
			return out, err
		}
		out.Model = &m
	}
	return out, nil
}

// WriteAdmissionResult writes the real run for people
// (loadresult.WriteResult) and, with the model's, both side by side.
func WriteAdmissionResult(w io.Writer, r AdmissionResult) error {
	if err := loadresult.WriteResult(w, r.Result); err != nil {
		return err
	}
	if r.Model == nil {
		return nil
	}
	fmt.Fprintln(w, "\nModel and real run side by side:")
	return WriteAdmissionSideBySide(w, *r.Model, r.Result)
}

// WriteAdmissionSideBySide prints the model and the real run side by
// side, with the difference per outcome in requests and as a share of the
// model's requests; outcomes only a real run has are listed when they
// occurred.
func WriteAdmissionSideBySide(w io.Writer, model models.AdmissionResult, real loadgen.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "outcome\tmodel\treal\treal − model\tof requests\t")
	row := func(name string, m, r int) {
		share := 0.0
		if model.Requests > 0 {
			share = 100 * float64(r-m) / float64(model.Requests)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%+d\t%+.1f%%\t\n", name, m, r, r-m, share)
	}
	row("requests", model.Requests, real.Requests)
	row(string(loadgen.OnTime), model.OnTime, real.OnTime)
	row(string(loadgen.Rejected), model.Rejected, real.Rejected)
	row(string(loadgen.TooLate), model.TooLate, real.TooLate)
	row(string(loadgen.Unfinished), model.Unfinished, real.Unfinished)
	for _, o := range loadgen.Outcomes[4:] { // the outcomes the model does not have
		if n := real.Outcomes()[o]; n > 0 {
			fmt.Fprintf(tw, "%s (not in the model)\t\t%d\t\t\t\n", o, n)
		}
	}
	row("peak_queue", model.PeakQueue, real.PeakQueue)
	fmt.Fprintf(tw, "wasted_worker_s\t%d\t%.1f\t%+.1f\t\t\n", model.WastedWorkerS, real.WastedWorkerS, real.WastedWorkerS-float64(model.WastedWorkerS))
	if model.P95LatencyS != nil && real.P95LatencyS != nil {
		fmt.Fprintf(tw, "p95_latency_s\t%d\t%.2f\t%+.2f\t\t\n", *model.P95LatencyS, *real.P95LatencyS, *real.P95LatencyS-float64(*model.P95LatencyS))
	}
	return tw.Flush()
}
