package runcmd

import (
	"encoding/json"
	"io"
	"os"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/experiments/runner"
)

// Process is the run raw describes (a records.Config as JSON), its
// result written to stdout as loadlab run --json writes it.
func Process(raw string, stdout io.Writer) error {
	var cfg records.Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return usageErr("run process: %s: %v", runner.EnvRunProcess, err)
	}
	if err := cfg.Validate(); err != nil {
		return usageErr("run process: %v", err)
	}
	// SIGTERM, as Ctrl-C: no new record; those in flight finish. Again: abort.
	s, err := cli.Begin("", nil, os.Stderr)
	if err != nil {
		return err
	}
	defer s.Close()
	cfg.Stop = s.Stop
	res, err := records.Run(s.Ctx, cfg)
	o := runOptions{asJSON: true}
	return o.finish(stdout, res, err)
}
