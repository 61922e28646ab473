package main

import (
	"embed"
	"flag"
	"io"

	"github.com/loadlab/loadlab/cmd/internal/cli"
)

// newFlagSet is cli.NewFlagSet with the command's purpose and examples
// first in its help, and its flags in groups.
func newFlagSet(name, synopsis string, stdout io.Writer) (*flag.FlagSet, func([]string) error) {
	return cli.NewFlagSet(name, helpIntro[name]+synopsis, stdout, helpGroups[name]...)
}

// helpIntro opens each command's help: one line of purpose, then examples.
var helpIntro = map[string]string{
	"load": "Offers an endpoint open load (arrivals on a schedule) or closed load (users); every request ends in one outcome.\n\nExamples:\n" +
		"  loadlab load                                 # the admission model's ramp, against an endpoint in this process\n" +
		"  loadlab load --target http://127.0.0.1:9000/api --base-rate 50 --peak-rate 200 --threshold 'p99_ms<300'\n" +
		"  loadlab load --generator closed --users 20 --compare-model\n\n",
	"probe": "Finds one dependency's capacity: its knee, where rejections begin, and a scalability fit.\n\nExamples:\n" +
		"  loadlab probe --target http://127.0.0.1:9001/ledger --body '{\"id\":{{json .ID}}}' --concurrency 1-16 --json > ledger.json\n" +
		"  loadlab probe --target http://127.0.0.1:9000/lookup/1 --concurrency 1,2,4,8,16,32 --out lookup\n\n",
	"advise": "Sizes a strategy from probes: permits per dependency, records in flight.\n\n",
	"experiment": "Runs an experiment matrix, judges its preregistered hypotheses and writes the report.\n\nExamples:\n" +
		"  loadlab experiment                           # the built-in replication: about 7 min on 2 cores\n" +
		"  loadlab experiment --runs 3 --records 20 --calibration-runs 0   # a quick, exploratory look: about 2 min\n" +
		"  loadlab experiment --file my.yaml --hypotheses my-hypotheses.yaml --out results/mine\n" +
		"  loadlab experiment --resume results/mine       # finish it after Ctrl-C, a kill or a crash\n" +
		"  loadlab experiment --init --pipeline shop.yaml --probe stock=stock.json --probe orders=orders.json   # your own services\n\n",
	"check DIR": "Re-judges a results folder from its raw data.\n\nExamples:\n" +
		"  loadlab check experiments/results/replication-v4\n" +
		"  loadlab check --accept-uncalibrated results/replication-20261202-080206\n\n",
	"merge --out DIR PARTIAL...": "Combines the shards of an experiment, or the segments of a load, into one result.\n\nExamples:\n" +
		"  loadlab merge --out results/all results/shard-0 results/shard-1\n" +
		"  loadlab merge --out load.json segment-0.json segment-1.json\n\n",
	"preregister": "Locks a hypotheses file before its first run.\n\nExample:\n" +
		"  loadlab preregister --file experiments/replication.yaml --hypotheses experiments/hypotheses-v5.yaml\n\n",
	"simulate concurrency": "The exact model of the concurrency simulation (48 seeded requests, 8 workers, client limits).\n\nExamples:\n" +
		"  loadlab simulate concurrency --limits 1,8,48\n  loadlab simulate concurrency --real --seeds 1-3 --time-scale 0.2\n\n",
	"simulate admission": "The exact model of the admission load test.\n\nExamples:\n" +
		"  loadlab simulate admission\n  loadlab simulate admission --generator closed --users 20 --json\n\n",
}

// helpGroups shows each command's flags by what they are about.
var helpGroups = map[string][]cli.Group{
	"load": {
		{Name: "Target", Flags: []string{"target", "wait", "admin-token"}},
		{Name: "Workload", Flags: []string{"generator", "base-rate", "peak-rate", "ramp-start", "ramp-end", "duration", "users", "think", "timeout", "time-scale", "arrivals", "segment", "start-at"}},
		{Name: "The endpoint in this process (without --target)", Flags: []string{"workers", "queue", "service-time"}},
		{Name: "Output", Flags: []string{"json", "threshold", "compare-model", "metrics-listen", "ui", "ui-keep"}},
		{Name: "Advanced", Flags: []string{"client", "max-in-flight", "late-threshold", "tie-window"}},
	},
	"probe": {
		{Name: "Target", Flags: []string{"target", "method", "body", "header", "ok-status", "reject-status", "timeout"}},
		{Name: "Steps", Flags: []string{"concurrency", "max-concurrency", "step", "warm-up"}},
		{Name: "Safety", Flags: []string{"max-rate", "max-duration", "stop-rejection-ratio", "stop-error-ratio", "stop-p99"}},
		{Name: "Output", Flags: []string{"json", "out"}},
	},
	"experiment": {
		{Name: "Design", Flags: []string{"file", "hypotheses", "runs", "records", "time-scale", "shard"}},
		{Name: "Your own services", Flags: []string{"init", "pipeline", "probe"}},
		{Name: "Calibration", Flags: []string{"calibration-runs", "max-bias", "calibration-only", "accept-bias", "accept-uncalibrated", "real-time-target"}},
		{Name: "Target", Flags: []string{"target", "wait", "admin-token"}},
		{Name: "Output", Flags: []string{"out", "force", "resume", "continue", "json-lines", "metrics-listen", "ui", "ui-keep"}},
	},
}

// synopses are the commands' descriptions in their help, after the
// purpose and examples, one file each.
//
//go:embed synopsis
var synopses embed.FS

// synopsis is command's description.
func synopsis(command string) string {
	b, err := synopses.ReadFile("synopsis/" + command + ".txt")
	if err != nil {
		panic(err) // the files are built in: a missing one is a build error
	}
	return string(b)
}
