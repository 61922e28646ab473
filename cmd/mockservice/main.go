// Command mockservice serves the lab's two mock dependencies, the enrichment
// API (POST /enrich) and the system of record (POST /records), from one
// process and one port. Run with --help for every setting.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/field"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, printOnly, err := parseConfig(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "mockservice: %v (see --help)\n", err)
		return 2
	}
	if printOnly {
		out, err := cfg.YAML()
		if err != nil {
			fmt.Fprintf(stderr, "mockservice: %v\n", err)
			return 1
		}
		stdout.Write(out)
		return 0
	}
	in, err := mockservice.NewInstances(cfg, max(cfg.Instances, 1))
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(stderr, "mockservice: listen: %v\n", err)
		return 1
	}
	logger := log.New(stderr, "mockservice: ", log.LstdFlags)
	fmt.Fprintf(stdout, "mockservice listening on http://%s (version %s, profile %s, time scale %g, seed %d)\n",
		ln.Addr(), mockservice.Version(), cfg.Profile, cfg.TimeScale, cfg.Seed)
	paths := in.Paths()
	if len(paths) > 1 {
		fmt.Fprintf(stdout, "%d independent instances, under http://%s%s … http://%s%s (GET /healthz at the root lists them)\n",
			len(paths), ln.Addr(), paths[0], ln.Addr(), paths[len(paths)-1])
	}
	for k, svc := range in.Services {
		prefix := ""
		if len(paths) > 1 {
			prefix = paths[k] + " "
		}
		if r := svc.Replayed; r.Path == "" {
			fmt.Fprintf(stdout, "%sstore: in memory (--store FILE keeps acknowledged writes across restarts)\n", prefix)
		} else {
			torn := ""
			if r.TornEnd {
				torn = "; a torn last line (an append cut short, never acknowledged) was ignored"
			}
			fmt.Fprintf(stdout, "%sstore: %s, %d accepted writes replayed%s\n", prefix, r.Path, r.Writes, torn)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err = in.Serve(ctx, ln)
	switch {
	case err == nil:
		logger.Printf("stopped cleanly")
		return 0
	case errors.Is(err, mockservice.ErrForcedShutdown):
		logger.Printf("%v (after %v)", err, cfg.ShutdownTimeout)
		return 1
	default:
		logger.Printf("%v", err)
		return 1
	}
}

// requiredFlags names, as the flags that set them, the config's fields
// that another setting can make required: an error about one says which
// flag to give.
var requiredFlags = field.Names{"admin_token": "--admin-token"}

// parseConfig builds the configuration: defaults, then the --config file,
// then any flag given on the command line (flags win over the file).
func parseConfig(args []string, helpOut io.Writer) (cfg config.Config, printOnly bool, err error) {
	fs := flag.NewFlagSet("mockservice", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by the caller
	var configPath string
	fs.StringVar(&configPath, "config", "", "YAML file of settings (keys as printed by --print-config); flags given on the command line override it")
	printConfig := fs.Bool("print-config", false, "print the effective configuration as YAML (a starting point for --config) and exit")
	b := &binder{fs: fs, def: config.Default()}
	b.bindService()
	b.bindStations()
	b.bindProfiles()
	fs.Usage = func() {} // help is printed below, only when asked for
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, helpOut)
		}
		return config.Default(), false, err
	}
	if fs.NArg() > 0 {
		return config.Default(), false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg, err = config.Load(configPath, b.overrides...)
	var fe *field.Error
	if errors.As(err, &fe) {
		if name, _ := requiredFlags.Name(fe.Field); name != "" {
			err = fmt.Errorf("%w (set %s)", err, name)
		}
	}
	return cfg, *printConfig, err
}

// printUsage prints the command's help and its flags to w.
func printUsage(fs *flag.FlagSet, w io.Writer) {
	fs.SetOutput(w)
	defer fs.SetOutput(io.Discard)
	fmt.Fprintf(w, `Usage: mockservice [flags]

Serves the lab's two mock dependencies on one port:
  POST /enrich   {"record_id": "...", "step": 1}   enrichment API (many workers)
  POST /records  {"id": "...", "complete": true}   system of record (6 workers, 6 queue slots, 503 beyond)
  OPTIONS /enrich, OPTIONS /records   204 with X-Loadlab-Mock (name/version) and
                 X-Loadlab-Time-Scale: identifies the mock; never reaches a station
  GET  /healthz  {"status":"ok","service":"loadlab-mock","version":...,"time_scale":...}
  GET  /metrics  Prometheus text format
  GET|PUT /admin/profile, POST /admin/reset, GET /admin/stats  (Bearer token when --admin-token is set)
Profiles: healthy, slow-enrichment, slow-write (and any defined in --config).
A config field's flag is its YAML path with dots and underscores as dashes.

Flags:
`)
	fs.PrintDefaults()
}
