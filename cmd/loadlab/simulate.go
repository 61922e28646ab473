package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/experiments/compare"
	"github.com/loadlab/loadlab/experiments/models"
	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/field"
)

// admissionNames names the fields of the admission scenario (and of the
// generator's schedule, which has the same names) as the flags
// admissionFlags binds, and the generator's other fields as load's flags.
var admissionNames = field.Names{
	"workers": "--workers", "service_time_s": "--service-time", "queue": "--queue", "timeout_s": "--timeout",
	"generator": "--generator", "base_rate": "--base-rate", "peak_rate": "--peak-rate", "ramp_start_s": "--ramp-start",
	"ramp_end_s": "--ramp-end", "users": "--users", "think_s": "--think", "duration_s": "--duration",
	"target": "--target", "arrivals": "--arrivals", "client": "--client", "max_in_flight": "--max-in-flight",
	"late_threshold": "--late-threshold", "tie_window": "--tie-window", "time_scale": "--time-scale",
	"admin_token": "--admin-token", "segment": "--segment", "start_at": "--start-at",
}

// concurrencyNames names the fields of the concurrency scenario, and of
// its replay, as simulate concurrency's flags.
var concurrencyNames = field.Names{
	"requests": "--requests", "workers": "--workers", "timeout_ns": "--timeout", "seed_from": "--seeds", "seed_to": "--seeds",
	"limits": "--limits", "durations": "--durations", "time_scale": "--time-scale",
}

// replayConcurrency replays every workload under every limit against an
// in-process mock service in replay mode and prints model and real side
// by side.
func replayConcurrency(r compare.ConcurrencyReplay, asJSON bool, stdout io.Writer) error {
	ctx, _, done, err := begin("", concurrencyNames.Rename(r.Validate()))
	if err != nil {
		return err
	}
	defer done()
	_, url, shutdown, err := mockservice.Start(compare.ReplayEndpoint(r.Scenario, r.TimeScale))
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	defer shutdown()
	r.Target = url
	res, err := compare.RunConcurrencyReplay(ctx, r)
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(fmt.Errorf("simulate: %w", ctx.Err()), "")
		}
		return fmt.Errorf("simulate: %w", err)
	}
	if asJSON {
		return writeJSON(stdout, res)
	}
	return compare.WriteConcurrencyResult(stdout, res)
}

func simulateConcurrency(args []string, stdout io.Writer) error {
	sc := models.DefaultConcurrencyScenario()
	fs, parse := newFlagSet("simulate concurrency",
		"Runs every client limit on every seeded workload of the concurrency simulation and\n"+
			"prints the median, minimum and maximum of each metric. Pure simulated time: no network.\n"+
			"With --real it also replays each workload over real HTTP against an in-process mock service in\n"+
			"replay mode (the scenario's workers, unbounded FIFO queue, each request served for exactly its\n"+
			"workload duration, work finished after the client gives up) and prints model and real side by\n"+
			"side, with how many workloads differ and the near-ties (work the server finished within 5 ms of the\n"+
			"client's deadline, real time).\n", stdout)
	fs.IntVar(&sc.Requests, "requests", sc.Requests, "requests per workload")
	fs.IntVar(&sc.Workers, "workers", sc.Workers, "server workers")
	fs.DurationVar(&sc.Timeout, "timeout", sc.Timeout, "client timeout, from issue")
	var seeds [2]uint32
	seedsFlag := cli.Parse(&seeds, fmt.Sprintf("%d-%d", sc.SeedFrom, sc.SeedTo), modelFlag(func(s string) (v [2]uint32, err error) {
		v[0], v[1], err = models.ParseSeeds(s)
		return v, err
	}))
	fs.Var(seedsFlag, "seeds", "workload seeds, FROM-TO (Mulberry32)")
	fs.Var(cli.Parse(&sc.Limits, "1,4,8,48", modelFlag(models.ParseLimits)), "limits",
		"client concurrency limits, comma-separated (1 is sequential; ≥ requests is unbounded)")
	fs.Var(cli.Parse(&sc.Durations, "75:80-240,20:241-500,5:800-1200", modelFlag(models.ParseMixtureMs)), "durations",
		"request durations: a mixture WEIGHT:LO-HI,... of whole-millisecond uniform ranges")
	asJSON := fs.Bool("json", false, `print {"strategies": [...]} as JSON instead of the table; with --real {"time_scale", "workloads",
"strategies": [{"name", "limit", "model", "real", "near_ties", "workloads_differing_…", "trials", "model_trials", …}]}`)
	real := fs.Bool("real", false, "also replay the workloads over real HTTP and compare (default seeds 1-10)")
	scale := cli.Optional[float64]{V: 1}
	fs.Var(&scale, "time-scale", "with --real: multiply every duration by this, at least 0.05 (figures stay in lab ms)")
	if err := parse(args); err != nil {
		return err
	}
	if *real && !seedsFlag.Given {
		seeds = [2]uint32{1, 10}
	}
	sc.SeedFrom, sc.SeedTo = seeds[0], seeds[1]
	if err := sc.Validate(); err != nil {
		return usageErr("%v", concurrencyNames.Rename(compare.ModelField(err)))
	}
	if scale.Given && !*real {
		return usageErr("--time-scale: only with --real (the model runs in simulated time)")
	}
	if *real {
		return replayConcurrency(compare.ConcurrencyReplay{Scenario: sc, TimeScale: scale.V}, *asJSON, stdout)
	}
	rep, err := models.SimulateConcurrency(sc)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, rep)
	}
	return compare.WriteConcurrencyTable(stdout, sc, rep)
}

// modelFlag is parse with its refusal as the flag's: the models name the
// field of a bad value, the flag set the flag.
func modelFlag[T any](parse func(string) (T, error)) func(string) (T, error) {
	return func(s string) (T, error) {
		v, err := parse(s)
		if fe := (*models.FieldError)(nil); errors.As(err, &fe) {
			err = fe.Err
		}
		return v, err
	}
}

func simulateAdmission(args []string, stdout io.Writer) error {
	sc := models.DefaultAdmissionScenario()
	fs, parse := newFlagSet("simulate admission",
		"One-second model of an endpoint with workers, a bounded FIFO queue and client timeouts, under an\n"+
			"open ramp or closed users. Reports every request as on time, rejected, served too late or unfinished.\n"+
			"Defaults are the admission model's opening run.\n", stdout)
	admissionFlags(fs, &sc)
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if err := parse(args); err != nil {
		return err
	}
	if err := sc.Validate(); err != nil {
		return usageErr("%v", admissionNames.Rename(compare.ModelField(err)))
	}
	res, err := models.SimulateAdmission(sc)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	return compare.WriteAdmission(stdout, sc, res)
}

// admissionFlags binds the admission scenario's flags; simulate admission
// and load share them, so one command line runs as model or for real.
func admissionFlags(fs *flag.FlagSet, sc *models.AdmissionScenario) {
	fs.IntVar(&sc.Workers, "workers", sc.Workers, "server workers")
	fs.IntVar(&sc.ServiceTime, "service-time", sc.ServiceTime, "seconds each request holds a worker")
	fs.IntVar(&sc.Queue, "queue", sc.Queue, "queue slots; a request finding the queue full is rejected")
	fs.IntVar(&sc.Timeout, "timeout", sc.Timeout, "seconds after which the client gives up (the server still serves it)")
	fs.StringVar((*string)(&sc.Generator), "generator", string(sc.Generator), "open (arrivals regardless of replies) or closed (users wait for replies)")
	fs.IntVar(&sc.BaseRate, "base-rate", sc.BaseRate, "open: requests per second outside the ramp")
	fs.IntVar(&sc.PeakRate, "peak-rate", sc.PeakRate, "open: requests per second during the ramp")
	fs.IntVar(&sc.RampStart, "ramp-start", sc.RampStart, "open: first second of the peak rate")
	fs.IntVar(&sc.RampEnd, "ramp-end", sc.RampEnd, "open: first second after the peak rate")
	fs.IntVar(&sc.Users, "users", sc.Users, "closed: virtual users (user i first sends at second i mod 5)")
	fs.IntVar(&sc.Think, "think", sc.Think, "closed: seconds a user waits after a reply or a timeout; after a rejection (or a drop) at least 1")
	fs.IntVar(&sc.Duration, "duration", sc.Duration, "seconds simulated")
}
