package advise

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/mockservice/atomicfile"
	"github.com/loadlab/loadlab/mockservice/field"
)

// Options are advice as a command line asks for it.
type Options struct {
	// Probes maps each dependency of the pipeline to the file of its
	// probe's JSON (loadlab probe --json).
	Probes map[string]string
	// Pipeline is the pipeline file; empty is the lab's.
	Pipeline string
	// TargetRate is the records per second wanted, in the probes' seconds
	// (0: as fast as the bottleneck allows).
	TargetRate float64
	// Name is the strategy's name.
	Name string
	// Out, when not empty, is where the strategy file is written.
	Out string
	// JSON prints the advice as one JSON object (see Report.Print).
	JSON bool
}

// AddProbe adds a probe given as "DEPENDENCY=FILE".
func (o *Options) AddProbe(v string) error {
	name, file, ok := strings.Cut(v, "=")
	if !ok || name == "" || file == "" {
		return fmt.Errorf("%q is not DEPENDENCY=FILE", v)
	}
	if _, dup := o.Probes[name]; dup {
		return fmt.Errorf("%s given twice", name)
	}
	if o.Probes == nil {
		o.Probes = map[string]string{}
	}
	o.Probes[name] = file
	return nil
}

// Report is what Execute did: the advice and its strategy file.
type Report struct {
	Advice Advice
	// File is the strategy file, written to Options.Out when set.
	File    []byte
	Options Options
}

// Execute reads o's pipeline and probes, advises, and writes the strategy
// file to o.Out when set; at is when, for the file's comment. Its error is
// bad input: a *field.Error naming the option ("pipeline", "probes",
// "probes.DEPENDENCY" for one probe's file, "out"), or Advise's.
func Execute(o Options, at time.Time) (Report, error) {
	p := pipeline.Lab()
	if o.Pipeline != "" {
		var err error
		if p, err = pipeline.Load(o.Pipeline); err != nil {
			return Report{}, field.Errorf("pipeline", "%w", err)
		}
	}
	if len(o.Probes) == 0 {
		return Report{}, field.Errorf("probes", "none given (one per dependency: %s)", strings.Join(p.Names(), ", "))
	}
	caps, err := readProbes(o.Probes)
	if err != nil {
		return Report{}, err
	}
	a, err := Advise(p, caps, o.TargetRate)
	if err != nil {
		return Report{}, err
	}
	data, err := a.File(o.Name, fmt.Sprintf("Written by loadlab advise at %s from the probes %s of pipeline %s (%s).\n"+
		"loadlab run --strategy-file reads `strategy`; `advice` says how it was reached.\nRun it: %s",
		at.UTC().Format(time.RFC3339), pairs(o.Probes), p.Name, p.File, a.RunCommand(o.Pipeline, cmp.Or(o.Out, "THIS-FILE"))))
	if err != nil {
		return Report{}, err
	}
	if o.Out != "" {
		if err := atomicfile.Write(o.Out, data); err != nil {
			return Report{}, field.Errorf("out", "%w", err)
		}
	}
	return Report{Advice: a, File: data, Options: o}, nil
}

// readProbes reads each dependency's probe, in the order of their names.
func readProbes(files map[string]string) (map[string]Capacity, error) {
	caps := map[string]Capacity{}
	for _, dep := range slices.Sorted(maps.Keys(files)) {
		name, file := "probes."+dep, files[dep]
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, field.Errorf(name, "%w", err)
		}
		var c Capacity
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, field.Errorf(name, "%s is not a probe's JSON: %w", file, err)
		}
		caps[dep] = c
	}
	return caps, nil
}

// Print prints the report: the advice as one indented JSON object with
// Options.JSON; otherwise the strategy file when it was not written, or a
// summary of it when it was.
func (r Report) Print(w io.Writer) error {
	a, o := r.Advice, r.Options
	switch {
	case o.JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(a)
	case o.Out == "":
		_, err := w.Write(r.File)
		return err
	}
	fmt.Fprintf(w, "Wrote %s: strategy %s, %d records in flight, permits %s\n", o.Out, o.Name, a.RecordsInFlight, pairs(a.Strategy(o.Name).Permits))
	fmt.Fprintf(w, "Bottleneck %s: %.4g records/s; time per record %.4g s; sized for %.4g records/s\n",
		a.Bottleneck, a.RateBound, a.TimePerRecord, a.PlannedRate)
	a.printLimits(w)
	for _, warning := range a.Warnings {
		fmt.Fprintf(w, "Warning: %s\n", warning)
	}
	fmt.Fprintf(w, "Run it: %s\n", a.RunCommand(o.Pipeline, o.Out))
	return nil
}

// printLimits says the rates, timeouts and retries the advice suggests,
// each with where it came from.
func (a Advice) printLimits(w io.Writer) {
	for _, name := range slices.Sorted(maps.Keys(a.Dependencies)) {
		if d := a.Dependencies[name]; d.RatePerSecond > 0 {
			fmt.Fprintf(w, "Rate: %s at most %.4g calls/s (in the strategy): %s\n", name, d.RatePerSecond, d.RateFrom)
		}
	}
	if r := a.Run; r.CallTimeoutSeconds > 0 {
		var each []string
		for _, name := range slices.Sorted(maps.Keys(a.Dependencies)) {
			each = append(each, fmt.Sprintf("%s: %s", name, a.Dependencies[name].CallTimeoutFrom))
		}
		fmt.Fprintf(w, "Call timeout: --call-timeout %s, the longest of %s, rounded up: a call slower than any the probe saw, "+
			"at any load it put on the service, has met trouble (a busier client than the probe's adds its own delay: raise it by that)\n",
			seconds(r.CallTimeoutSeconds), strings.Join(each, "; "))
		fmt.Fprintf(w, "Permit wait: --permit-timeout %s: %s\n", seconds(r.PermitTimeoutSeconds), r.PermitTimeoutFrom)
	}
	if r := a.Run.Retries; r != nil {
		fmt.Fprintf(w, "Retries (suggested): %d attempts, backoff %v–%v, budget %.2g of first attempts within %v: %s\n",
			r.Attempts, r.BaseBackoff, r.MaxBackoff, r.Budget.Ratio, r.Budget.TTL, a.Run.RetriesFrom)
	} else {
		fmt.Fprintf(w, "Retries: %s\n", a.Run.RetriesFrom)
	}
}

// RunCommand is the loadlab run command line that runs the strategy file
// with the timeouts the advice suggests.
func (a Advice) RunCommand(pipelineFile, strategyFile string) string {
	cmd := "loadlab run"
	if pipelineFile != "" {
		cmd += " --pipeline " + pipelineFile
	}
	cmd += " --strategy-file " + strategyFile
	if r := a.Run; r.CallTimeoutSeconds > 0 {
		cmd += fmt.Sprintf(" --call-timeout %s --permit-timeout %s", seconds(r.CallTimeoutSeconds), seconds(r.PermitTimeoutSeconds))
	}
	return cmd
}

// seconds is a number of seconds as a flag's duration ("130ms", "2.2s").
func seconds(s float64) string { return time.Duration(math.Round(s * 1e9)).String() }

// pairs writes a map as "a=1, b=2", sorted by key.
func pairs[V any](m map[string]V) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
