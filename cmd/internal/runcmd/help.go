package runcmd

import (
	_ "embed"
	"flag"
	"io"

	"github.com/loadlab/loadlab/cmd/internal/cli"
)

// intro opens run's help: one line of purpose, then examples.
const intro = "Runs one batch of records under a strategy; every record ends in exactly one state.\n\nExamples:\n" +
	"  loadlab run --strategy C4 --records 200      # the lab's pipeline, against mockservice on 127.0.0.1:8080\n" +
	"  loadlab run --pipeline shop.yaml --strategy-file advised.yaml --records 1000 --threshold 'rejected<1%'\n" +
	"  loadlab run --strategy C2 --profile slow-write --json\n\n"

// groups shows run's flags by what they are about.
var groups = []cli.Group{
	{Name: "Target", Flags: []string{"target", "pipeline", "call-url", "wait", "profile", "reset", "admin-token"}},
	{Name: "Workload", Flags: []string{"records", "duration", "phases", "start-at", "time-scale", "run-id"}},
	{Name: "Budgets", Flags: []string{"strategy", "strategy-file", "permits", "rates", "records-in-flight", "shared-permits",
		"enrichment-permits", "write-permits", "enrichment-rate", "write-rate", "adaptive", "retries", "retry-backoff",
		"retry-budget", "call-timeout", "permit-timeout"}},
	{Name: "Output", Flags: []string{"json", "threshold", "sample-interval", "metrics-listen", "ui", "ui-keep"}},
	{Name: "Advanced", Flags: []string{"faults"}},
}

// synopsis is run's description, after the purpose and examples.
//
//go:embed synopsis.txt
var synopsis string

// newFlagSet is run's flag set: its help the intro, the synopsis and the
// flags in groups.
func newFlagSet(stdout io.Writer) (*flag.FlagSet, func([]string) error) {
	return cli.NewFlagSet("run", intro+synopsis, stdout, groups...)
}

// What every command shares, from cli.
var (
	usageErr    = cli.UsageErr
	interrupted = cli.Interrupted
	checkURL    = cli.CheckURL
	writeJSON   = cli.WriteJSON
)

const exitFailed = cli.ExitFailed
