package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/advise"
	"github.com/loadlab/loadlab/client/pipeline"
)

// probeFlags collects --probe NAME=FILE.
type probeFlags map[string]string

func (p probeFlags) String() string { return fmt.Sprint(map[string]string(p)) }
func (p probeFlags) Set(v string) error {
	name, file, ok := strings.Cut(v, "=")
	if !ok || name == "" || file == "" {
		return fmt.Errorf("%q is not DEPENDENCY=FILE", v)
	}
	if _, dup := p[name]; dup {
		return fmt.Errorf("%s given twice", name)
	}
	p[name] = file
	return nil
}

func runAdvise(args []string, stdout io.Writer) error {
	probes := probeFlags{}
	fs, parse := newFlagSet("advise",
		"Writes a strategy file from a probe of every dependency of a pipeline (loadlab probe --json > FILE):\n"+
			"each dependency's permits at its knee (the highest concurrency probed if it showed none; never at or\n"+
			"past its first rejection), the bottleneck (the fewest records per second at its permits), and the\n"+
			"records in flight by Little's law: target rate × time per record (the calls' mean times at the\n"+
			"lowest concurrency probed, summed), the rate capped by the bottleneck, with a warning when the target\n"+
			"exceeds it. A dependency without a knee gets the highest concurrency probed, and the rate measured\n"+
			"there bounds it (said as a warning: probing further may allow more). Rates are per second of the\n"+
			"probes: probes of a mock service at a time scale advise runs at the same scale.\n"+
			"Run it with loadlab run --strategy-file FILE, or as strategy \"advised\" in an experiment.\n\n"+
			"Example:\n"+
			"  loadlab probe --target http://127.0.0.1:8080/enrich --body '{\"record_id\":{{json .ID}},\"step\":1}' \\\n"+
			"      --concurrency 1,2,4,8,16,32,64,128 --max-concurrency 128 --json > enrich.json\n"+
			"  loadlab probe --target http://127.0.0.1:8080/records --body '{\"id\":{{json .ID}},\"complete\":true}' \\\n"+
			"      --concurrency 1-16 --json > records.json\n"+
			"  loadlab advise --probe enrichment=enrich.json --probe records=records.json --target-rate 150 --out advised.yaml\n", stdout)
	fs.Var(probes, "probe", "DEPENDENCY=FILE: a probe's JSON for one dependency of the pipeline (once per dependency)")
	pipelineFile := fs.String("pipeline", "", "the pipeline file (default: the lab's, "+pipeline.LabFile+")")
	target := fs.Float64("target-rate", 0, "records per second wanted, in the probes' seconds (0: as fast as the bottleneck allows)")
	name := fs.String("name", "advised", "the strategy's name")
	out := fs.String("out", "", "write the strategy file here (default: print it)")
	asJSON := fs.Bool("json", false, "print the advice as one JSON object (the file is still written with --out)")
	if err := parse(args); err != nil {
		return err
	}
	p := pipeline.Lab()
	if *pipelineFile != "" {
		var err error
		if p, err = pipeline.Load(*pipelineFile); err != nil {
			return usageErr("advise: --pipeline: %v", err)
		}
	}
	if len(probes) == 0 {
		return usageErr("advise: no --probe (one per dependency: %s)", strings.Join(p.Names(), ", "))
	}
	caps := map[string]advise.Capacity{}
	for dep, file := range probes {
		data, err := os.ReadFile(file)
		if err != nil {
			return usageErr("advise: --probe %s: %v", dep, err)
		}
		var c advise.Capacity
		if err := json.Unmarshal(data, &c); err != nil {
			return usageErr("advise: --probe %s: %s is not a probe's JSON: %v", dep, file, err)
		}
		caps[dep] = c
	}
	a, err := advise.Advise(p, caps, *target)
	if err != nil {
		return usageErr("advise: %v", err)
	}
	data, err := a.File(*name, fmt.Sprintf("Written by loadlab advise at %s from the probes %s of pipeline %s (%s).\n"+
		"loadlab run --strategy-file reads `strategy`; `advice` says how it was reached.",
		time.Now().UTC().Format(time.RFC3339), pairs(probes), p.Name, p.File))
	if err != nil {
		return err
	}
	if *out != "" {
		if err := os.WriteFile(*out, data, 0o644); err != nil {
			return usageErr("advise: --out: %v", err)
		}
	}
	switch {
	case *asJSON:
		return writeJSON(stdout, a)
	case *out == "":
		_, err = stdout.Write(data)
		return err
	}
	fmt.Fprintf(stdout, "Wrote %s: strategy %s, %d records in flight, permits %s\n", *out, *name, a.RecordsInFlight, pairs(a.Strategy(*name).Permits))
	fmt.Fprintf(stdout, "Bottleneck %s: %.4g records/s; time per record %.4g s; sized for %.4g records/s\n",
		a.Bottleneck, a.RateBound, a.TimePerRecord, a.PlannedRate)
	for _, w := range a.Warnings {
		fmt.Fprintf(stdout, "Warning: %s\n", w)
	}
	return nil
}

// pairs writes a map as "a=1, b=2", sorted by key.
func pairs[V any](m map[string]V) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
