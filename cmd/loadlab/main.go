// Command loadlab is the project's front door. Subcommands:
//
//	loadlab experiment             the replication matrix, hypotheses and reports
//	loadlab preregister            lock the hypotheses before the first run
//	loadlab check DIR              re-judge a results folder
//	loadlab merge --out DIR P...   combine shards of a matrix, or segments of a load
//	loadlab compare BEFORE AFTER   a change judged against the noise: two sets of runs, metric by metric
//	loadlab run                    one batch of records against a running mock service, or your own services
//	loadlab probe                  the capacity of one dependency: stepped concurrency, knee, USL fit
//	loadlab advise                 a strategy file from probes: permits at the knees, records in flight
//	loadlab mock                   virtual copies of your dependencies, fitted from their probes
//	loadlab load                   open or closed load against an endpoint, every request one outcome
//	loadlab simulate concurrency   the exact model of the concurrency simulation
//	loadlab simulate admission     the exact model of the admission load test
//	loadlab version                the module version, VCS revision and Go version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/client/threshold"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/cmd/internal/comparecmd"
	"github.com/loadlab/loadlab/cmd/internal/mockcmd"
	"github.com/loadlab/loadlab/cmd/internal/runcmd"
)

func main() {
	// A client run started by the experiment runner enters its CPU limit
	// and re-executes itself before anything else happens.
	cpulimit.Enter()
	// The experiment's mock service as a process of its own, which the
	// runner can restart, is this binary too.
	enterMockProcess()
	// So is each run of an experiment's client.
	enterRunProcess()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `Usage: loadlab COMMAND [flags]

Commands:
  experiment             run the replication matrix (built in, or --file), judge the
                         preregistered hypotheses, write results.json, report.md, report.html
  preregister            lock the hypotheses file's SHA-256 before the first run
  check DIR              re-judge a results folder and print the verdicts
  merge --out DIR P...   combine the shards of a matrix (experiment --shard i/n) into one results
                         folder, or the segments of a load (load --segment i/n) into one result
  compare BEFORE AFTER   judge a change against the noise: two sets of runs (results folders, or
                         run or load --json), metric by metric: medians, ratio with its interval,
                         better / worse / no change (Holm-corrected, minimum effect); 99 a regression
  run                    process one batch of records (3 enrichment calls + 1 write each)
                         against a running mock service with a strategy: C1, C2, C3, C4,
                         C5-aimd, C5-vegas (adaptive limits), C6, C2-retries (retries),
                         sequential, bounded:N, unbounded; or your own services: --pipeline FILE
  probe                  drive one dependency at stepped concurrency and report its service time,
                         plateau, knee, first rejection and a Universal Scalability Law fit
  advise                 write a strategy file from probes of a pipeline's dependencies:
                         permits at each knee, records in flight by Little's law
  mock                   serve virtual copies of your dependencies, each fitted from a probe of it
                         (workers, queue, refusals, service times, rate limit); --check compares
  load                   drive an endpoint with an open ramp or closed users and report every
                         request in one outcome (on time, rejected, served too late, unfinished, ...)
                         (flags as simulate admission; --compare-model puts both side by side)
  simulate concurrency   exact model of the concurrency simulation
                         (48 seeded requests, 8 workers, FIFO queue, client limits)
  simulate admission     exact model of the admission load test
                         (one-second steps, open ramp or closed users, bounded queue, timeouts)
  version                the module version, VCS revision and Go version of this binary

Run "loadlab COMMAND --help" for a command's flags.

Exit codes, for every command: 0 clean; 1 records, requests or runs failed; 2 bad input,
or a target unfit for the command (nothing sent); 99 a --threshold of run or load breached,
or a significant regression found by compare;
130 interrupted (SIGINT or SIGTERM): what was measured is written, marked partial.
`

const simulateUsage = `Usage: loadlab simulate MODEL [flags]

Models:
  concurrency   exact model of the concurrency simulation
                (48 seeded requests, 8 workers, FIFO queue, client limits)
  admission     exact model of the admission load test
                (one-second steps, open ramp or closed users, bounded queue, timeouts)

Run "loadlab simulate MODEL --help" for a model's flags.
`

func run(args []string, stdout, stderr io.Writer) int {
	return exitCode(dispatch(args, stdout), stderr)
}

// exitCode is the exit code of a command that returned err, which it
// prints to stderr.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ee *cli.ExitError
	var breach *threshold.Breach
	switch {
	case errors.As(err, &ee):
	case errors.As(err, &breach):
		ee = &cli.ExitError{Code: threshold.ExitBreached, Err: err}
	case errors.Is(err, context.Canceled):
		// Interrupted before anything was measured: nothing to write.
		ee = &cli.ExitError{Code: exitInterrupted, Err: fmt.Errorf("interrupted before the first request: %w", err)}
	default:
		ee = &cli.ExitError{Code: exitFailed, Err: err}
	}
	fmt.Fprintf(stderr, "loadlab: %v\n", cli.OneLine(ee.Err))
	return ee.Code
}

func dispatch(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageErr("no command (see loadlab --help)")
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		if len(args) > 1 && args[0] == "help" { // loadlab help run: run's help
			return dispatch(append(args[1:], "--help"), stdout)
		}
		fmt.Fprint(stdout, usage)
		return nil
	case "version", "--version", "-version":
		return runVersion(args[1:], stdout)
	case "run":
		return runcmd.Main(args[1:], stdout)
	case "load":
		return runLoad(args[1:], stdout)
	case "experiment":
		return runExperiment(args[1:], stdout)
	case "preregister":
		return runPreregister(args[1:], stdout)
	case "check":
		return runCheck(args[1:], stdout)
	case "merge":
		return runMerge(args[1:], stdout)
	case "probe":
		return runProbe(args[1:], stdout)
	case "advise":
		return runAdvise(args[1:], stdout)
	case "mock":
		return mockcmd.Main(args[1:], stdout)
	case "compare":
		return comparecmd.Main(args[1:], stdout)
	case "simulate":
		if len(args) < 2 {
			return usageErr("simulate needs a model: concurrency or admission")
		}
		switch args[1] {
		case "concurrency":
			return simulateConcurrency(args[2:], stdout)
		case "admission":
			return simulateAdmission(args[2:], stdout)
		case "-h", "--help", "-help":
			fmt.Fprint(stdout, simulateUsage)
			return nil
		}
		return usageErr("simulate: unknown model %q%s (concurrency or admission)", args[1], cli.Suggest(args[1], []string{"concurrency", "admission"}))
	}
	return usageErr("unknown command %q%s (see loadlab --help)", args[0], cli.Suggest(args[0], commands))
}

// What every command shares, from cli.
const (
	exitFailed      = cli.ExitFailed
	exitUsage       = cli.ExitUsage
	exitInterrupted = cli.ExitInterrupted
)

var (
	usageErr    = cli.UsageErr
	interrupted = cli.Interrupted
	checkURL    = cli.CheckURL
)

var commands = []string{"experiment", "preregister", "check", "merge", "compare", "run", "probe", "advise", "mock", "load", "simulate", "version", "help"}

var writeJSON = cli.WriteJSON

// partFlag binds a flag that takes "i/n" (--shard, --segment) to *to,
// read by parse, empty as none: a value that still holds "$(" is an index
// its orchestrator did not substitute, and the refusal says how to mend
// that.
func partFlag[T any](to *T, parse func(string) (T, error)) *cli.Parsed[T] {
	p := cli.Parse(to, "", func(s string) (T, error) {
		v, err := parse(s)
		if err != nil && strings.Contains(s, "$(") {
			return v, fmt.Errorf("%q: the index was not substituted (in a Kubernetes Job, define JOB_COMPLETION_INDEX in the container's env)", s)
		}
		return v, err
	})
	p.ValueFirst = true
	return p
}

// begin starts a command that stops at once on SIGINT or SIGTERM (see
// cli.Begin): its context, its metrics Registerer, and what undoes both.
func begin(metricsAddr string, check error) (context.Context, prometheus.Registerer, func(), error) {
	s, err := cli.Begin(metricsAddr, check, nil)
	return s.Ctx, s.Registerer, s.Close, err
}
