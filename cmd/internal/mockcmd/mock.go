// Package mockcmd is loadlab mock: virtual copies of one's own
// dependencies, each fitted from a probe of the original (the JSON of
// loadlab probe --json) and served as the mock service's station, until
// Ctrl-C; with --check, each copy probed as its original was and both
// printed side by side.
package mockcmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/client/virtualcopy"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/virtual"
)

// options is loadlab mock's command line.
type options struct {
	probes, listen        cli.Strings
	workers, queue, burst cli.Pairs
	pipelineFile          string
	seed                  uint
	timeScale             float64
	adminToken            string
	check                 bool
	// originals are the probes read, by copy: what --check compares with.
	originals map[string]probe.Result
}

func (o *options) bind(fs *flag.FlagSet) {
	o.probes.Form, o.listen.Form = "NAME=FILE", "NAME=ADDR"
	fs.Var(&o.probes, "probe", "NAME=FILE: a copy named NAME fitted from FILE, the JSON of loadlab probe --json of the original\n(repeat for each dependency)")
	fs.Var(&o.listen, "listen", "NAME=ADDR: where the copy NAME listens, host:port (default 127.0.0.1:0, a port of the system's choosing)")
	fs.StringVar(&o.pipelineFile, "pipeline", "", "a pipeline file: each copy answers every path its dependency of the same name calls (a path\nwith a template, /lookup/{{.ID}}, answered as every path below its fixed part, /lookup/*), besides the probe's")
	o.workers.Check, o.queue.Check, o.burst.Check = whole(1), whole(-1), whole(1)
	fs.Var(&o.workers, "workers", "NAME=N: the copy's workers, where its probe reached no plateau (otherwise they are the probe's)")
	fs.Var(&o.queue, "queue", "NAME=N: the copy's queue slots, where its probe saw no refusal (-1: unbounded)")
	fs.Var(&o.burst, "burst", "NAME=N: a rate-limited copy's burst, which a probe cannot measure (default 1)")
	fs.UintVar(&o.seed, "seed", 1, "seed of the copies' service-time draws (each copy's stream from it and its name)")
	fs.Float64Var(&o.timeScale, "time-scale", 1, "multiplies every service time and divides every rate (0.1 runs ten times faster)")
	fs.StringVar(&o.adminToken, "admin-token", "", "bearer token required on the copies' /admin/* routes (needed for a non-loopback --listen)")
	fs.BoolVar(&o.check, "check", false, "probe each copy as its original was probed, print both side by side with the differences, and exit:\n"+
		"0 when every copy has the original's knee and first refusal and a plateau and service time (p50, p99)\nwithin 10%, 1 otherwise")
}

// whole refuses a number that is not whole or below least.
func whole(least int) func(string, float64) error {
	return func(_ string, v float64) error {
		if v != float64(int(v)) || v < float64(least) {
			return fmt.Errorf("%v is not a whole number ≥ %d", v, least)
		}
		return nil
	}
}

// Main is loadlab mock.
func Main(args []string, stdout io.Writer) error {
	fs, parse := cli.NewFlagSet("mock --probe NAME=FILE ...", intro, stdout, groups...)
	var o options
	o.bind(fs)
	if err := parse(args); err != nil {
		return err
	}
	copies, cfg, err := o.fit()
	if err != nil {
		return err
	}
	urls, stop, err := virtual.Start(cfg)
	if err != nil {
		return cli.UsageErr("mock: %v", err)
	}
	defer stop()
	for _, c := range copies {
		fmt.Fprintf(stdout, "%s: %s %s%s\n", c.Name, c.Method, urls[c.Name], c.Path)
		for _, line := range c.Said {
			fmt.Fprintf(stdout, "  %s\n", line)
		}
	}
	if o.check {
		return o.checkAll(copies, urls, nil, stdout)
	}
	s, err := cli.Begin("", nil, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintln(stdout, "Serving the copies until Ctrl-C.")
	<-s.Ctx.Done()
	return nil
}

// fit reads each probe and fits its copy, and the copies' settings.
func (o *options) fit() ([]virtualcopy.Copy, config.Copies, error) {
	cfg := config.Copies{Seed: uint32(o.seed), TimeScale: o.timeScale, AdminToken: o.adminToken}
	if len(o.probes.M) == 0 {
		return nil, cfg, cli.UsageErr("mock: which dependencies? Give --probe NAME=FILE for each (the JSON of loadlab probe --json)")
	}
	for name := range o.listen.M {
		if _, ok := o.probes.M[name]; !ok {
			return nil, cfg, cli.UsageErr("mock: --listen %s: no --probe %s=FILE%s", name, name, cli.Suggest(name, slices.Collect(maps.Keys(o.probes.M))))
		}
	}
	var p *pipeline.Pipeline
	if o.pipelineFile != "" {
		var err error
		if p, err = pipeline.Load(o.pipelineFile); err != nil {
			return nil, cfg, cli.UsageErr("mock: --pipeline: %v", err)
		}
	}
	var copies []virtualcopy.Copy
	o.originals = map[string]probe.Result{}
	for _, name := range slices.Sorted(maps.Keys(o.probes.M)) {
		r, err := probe.ReadFile(o.probes.M[name])
		if err != nil {
			return nil, cfg, cli.UsageErr("mock: --probe %s: %v", name, err)
		}
		c, err := virtualcopy.Fit(name, r, o.given(name))
		if err != nil {
			return nil, cfg, cli.UsageErr("mock: --probe %s=%s: %v", name, o.probes.M[name], err)
		}
		listen := o.listen.M[name]
		if listen == "" {
			listen = "127.0.0.1:0"
		}
		paths, err := pathsOf(&c, p)
		if err != nil {
			return nil, cfg, err
		}
		o.originals[name] = r
		copies = append(copies, c)
		cfg.Copies = append(cfg.Copies, c.Virtual(listen, paths...))
	}
	return copies, cfg, nil
}

// pathsOf are the paths copy c answers: its probe's, and with a pipeline
// (p, else nil) those its dependency of the same name calls, whose
// success status it then answers with (AnswerAs).
func pathsOf(c *virtualcopy.Copy, p *pipeline.Pipeline) ([]string, error) {
	if p == nil {
		return nil, nil
	}
	d := p.Dependency(c.Name)
	if d == nil {
		return nil, cli.UsageErr("mock: --probe %s: pipeline %s has no dependency %s (it has %s)%s", c.Name, p.Name, c.Name,
			strings.Join(p.Names(), ", "), cli.Suggest(c.Name, p.Names()))
	}
	c.AnswerAs(d)
	paths, err := c.PathsFor(d)
	if err != nil {
		return nil, cli.UsageErr("mock: --probe %s: %v", c.Name, err)
	}
	return paths, nil
}

// given is what the flags say of the copy name that its probe cannot.
func (o *options) given(name string) virtualcopy.Options {
	var opt virtualcopy.Options
	if v, ok := o.workers.M[name]; ok {
		n := int(v)
		opt.Workers = &n
	}
	if v, ok := o.queue.M[name]; ok {
		n := int(v)
		opt.Queue = &n
	}
	opt.Burst = int(o.burst.M[name])
	return opt
}

// checkAll probes each copy as its original was (over dial, when set)
// and prints both side by side; it fails when a copy is not faithful.
func (o *options) checkAll(copies []virtualcopy.Copy, urls map[string]string, dial transport.Dialer, stdout io.Writer) error {
	var differ []string
	for _, c := range copies {
		original := o.originals[c.Name]
		cfg := original.Plan.Config(urls[c.Name] + c.Path)
		cfg.Dial = dial
		fmt.Fprintf(os.Stderr, "mock: probing the copy %s as its original was (%d steps, about %.0f s)\n", c.Name, len(cfg.Concurrency), original.Plan.PlannedSeconds)
		copied, err := probe.Run(context.Background(), cfg, nil)
		if err != nil {
			return fmt.Errorf("mock: --check %s: %w", c.Name, err)
		}
		fmt.Fprintln(stdout)
		n, err := virtualcopy.WriteComparison(stdout, c.Name, virtualcopy.Compare(original, copied))
		if err != nil {
			return err
		}
		if n > 0 {
			differ = append(differ, fmt.Sprintf("%s (%d figures)", c.Name, n))
		}
	}
	if len(differ) > 0 {
		return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("mock: --check: the copies of %s differ from their originals", strings.Join(differ, ", "))}
	}
	fmt.Fprintln(stdout, "\nEvery copy is faithful to its original.")
	return nil
}
