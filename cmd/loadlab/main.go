// Command loadlab is the project's front door. Subcommands:
//
//	loadlab experiment             the replication matrix, hypotheses and reports
//	loadlab preregister            lock the hypotheses before the first run
//	loadlab check DIR              re-judge a results folder
//	loadlab run                    one batch of records against a running mock service
//	loadlab load                   open or closed load against an endpoint, four outcomes
//	loadlab simulate concurrency   the exact model of the concurrency simulation
//	loadlab simulate admission     the exact model of the admission load test
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/loadlab/loadlab/experiments"
	"github.com/loadlab/loadlab/models"
)

func main() {
	// A client run started by the experiment runner enters its CPU limit
	// and re-executes itself before anything else happens.
	experiments.EnterLimits()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `Usage: loadlab COMMAND [flags]

Commands:
  experiment             run the replication matrix (experiments/replication.yaml), judge the
                         preregistered hypotheses, write results.json, report.md, report.html
  preregister            lock the hypotheses file's SHA-256 before the first run
  check DIR              re-judge a results folder and print the verdicts
  run                    process one batch of records (3 enrichment calls + 1 write each)
                         against a running mock service with a strategy: C1, C2, C3, C4,
                         sequential, bounded:N, unbounded
  load                   drive an endpoint with an open ramp or closed users and report every
                         request as on time, rejected, served too late or unfinished
                         (flags as simulate admission; --compare-model puts both side by side)
  simulate concurrency   exact model of the published concurrency simulation
                         (48 seeded requests, 8 workers, FIFO queue, client limits)
  simulate admission     exact model of the admission load test
                         (one-second steps, open ramp or closed users, bounded queue, timeouts)

Run "loadlab COMMAND --help" for a command's flags.
`

// exitError carries an exit code: 2 for bad usage, 1 for failures.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func usageErr(format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, a...)}
}

func run(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "loadlab: %v\n", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func dispatch(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageErr("no command (see loadlab --help)")
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	case "run":
		return runRecords(args[1:], stdout)
	case "load":
		return runLoad(args[1:], stdout)
	case "experiment":
		return runExperiment(args[1:], stdout)
	case "preregister":
		return runPreregister(args[1:], stdout)
	case "check":
		return runCheck(args[1:], stdout)
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
			fmt.Fprint(stdout, usage)
			return nil
		}
		return usageErr("simulate: unknown model %q (concurrency or admission)", args[1])
	}
	return usageErr("unknown command %q (see loadlab --help)", args[0])
}

// newFlagSet returns a flag set that reports errors through the caller, in
// one line, and prints help to stdout only when asked.
func newFlagSet(name, synopsis string, stdout io.Writer) (*flag.FlagSet, func([]string) error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	parse := func(args []string) error {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprintf(stdout, "Usage: loadlab %s [flags]\n\n%s\nFlags:\n", name, synopsis)
			fs.PrintDefaults()
			return err
		}
		if err != nil {
			return usageErr("%s: %v", name, err)
		}
		if fs.NArg() > 0 {
			return usageErr("%s: unexpected argument %q", name, fs.Arg(0))
		}
		return nil
	}
	return fs, parse
}

func simulateConcurrency(args []string, stdout io.Writer) error {
	sc := models.DefaultConcurrencyScenario()
	fs, parse := newFlagSet("simulate concurrency",
		"Runs every client limit on every seeded workload of the published concurrency simulation and\n"+
			"prints the median, minimum and maximum of each metric. Pure simulated time: no network.\n", stdout)
	fs.IntVar(&sc.Requests, "requests", sc.Requests, "requests per workload")
	fs.IntVar(&sc.Workers, "workers", sc.Workers, "server workers")
	fs.DurationVar(&sc.Timeout, "timeout", sc.Timeout, "client timeout, from issue")
	seeds := fs.String("seeds", fmt.Sprintf("%d-%d", sc.SeedFrom, sc.SeedTo), "workload seeds, FROM-TO (Mulberry32)")
	limits := fs.String("limits", "1,4,8,48", "client concurrency limits, comma-separated (1 is sequential; ≥ requests is unbounded)")
	durations := fs.String("durations", "75:80-240,20:241-500,5:800-1200",
		"request durations: a mixture WEIGHT:LO-HI,... of whole-millisecond uniform ranges")
	asJSON := fs.Bool("json", false, `print {"strategies": [...]} as JSON instead of the table`)
	if err := parse(args); err != nil {
		return err
	}
	var err error
	if sc.SeedFrom, sc.SeedTo, err = models.ParseSeeds(*seeds); err != nil {
		return usageErr("%v", err)
	}
	if sc.Limits, err = models.ParseLimits(*limits); err != nil {
		return usageErr("%v", err)
	}
	if sc.Durations, err = models.ParseMixtureMs(*durations); err != nil {
		return usageErr("%v", err)
	}
	if err := sc.Validate(); err != nil {
		return usageErr("%v", err)
	}
	rep, err := models.SimulateConcurrency(sc)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, rep)
	}
	return models.WriteConcurrencyTable(stdout, sc, rep)
}

func simulateAdmission(args []string, stdout io.Writer) error {
	sc := models.DefaultAdmissionScenario()
	fs, parse := newFlagSet("simulate admission",
		"One-second model of an endpoint with workers, a bounded FIFO queue and client timeouts, under an\n"+
			"open ramp or closed users. Reports every request as on time, rejected, served too late or unfinished.\n"+
			"Defaults are the document's opening run.\n", stdout)
	admissionFlags(fs, &sc)
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if err := parse(args); err != nil {
		return err
	}
	if err := sc.Validate(); err != nil {
		return usageErr("%v", err)
	}
	res, err := models.SimulateAdmission(sc)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	return models.WriteAdmission(stdout, sc, res)
}

// admissionFlags binds the admission scenario's flags; simulate admission
// and load share them, so one command line runs as model or for real.
func admissionFlags(fs *flag.FlagSet, sc *models.AdmissionScenario) {
	fs.IntVar(&sc.Workers, "workers", sc.Workers, "server workers")
	fs.IntVar(&sc.ServiceTime, "service-time", sc.ServiceTime, "seconds each request holds a worker")
	fs.IntVar(&sc.Queue, "queue", sc.Queue, "queue slots; a request finding the queue full is rejected")
	fs.IntVar(&sc.Timeout, "timeout", sc.Timeout, "seconds after which the client gives up (the server still serves it)")
	fs.StringVar(&sc.Generator, "generator", sc.Generator, "open (arrivals regardless of replies) or closed (users wait for replies)")
	fs.IntVar(&sc.BaseRate, "base-rate", sc.BaseRate, "open: requests per second outside the ramp")
	fs.IntVar(&sc.PeakRate, "peak-rate", sc.PeakRate, "open: requests per second during the ramp")
	fs.IntVar(&sc.RampStart, "ramp-start", sc.RampStart, "open: first second of the peak rate")
	fs.IntVar(&sc.RampEnd, "ramp-end", sc.RampEnd, "open: first second after the peak rate")
	fs.IntVar(&sc.Users, "users", sc.Users, "closed: virtual users (user i first sends at second i mod 5)")
	fs.IntVar(&sc.Think, "think", sc.Think, "closed: seconds a user waits after a reply, rejection or timeout")
	fs.IntVar(&sc.Duration, "duration", sc.Duration, "seconds simulated")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
