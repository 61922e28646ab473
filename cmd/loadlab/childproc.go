package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/loadlab/loadlab/cmd/internal/runcmd"
	"github.com/loadlab/loadlab/experiments/mockproc"
	"github.com/loadlab/loadlab/experiments/runner"
	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/config"
)

// enterRunProcess runs the records of the run runner.EnvRunProcess holds
// (the experiment runner's client run, as a process of its own under the
// cell's CPU limit), prints its result as JSON, and exits as loadlab run
// --json does; otherwise it returns at once.
func enterRunProcess() {
	raw := os.Getenv(runner.EnvRunProcess)
	if raw == "" {
		return
	}
	os.Exit(exitCode(runcmd.Process(raw, os.Stdout), os.Stderr))
}

// enterMockProcess serves the mock service when mockproc.EnvMockProcess
// asks for it (the experiment runner's mock service as a process of its
// own), and exits; otherwise it returns at once.
func enterMockProcess() {
	raw := os.Getenv(mockproc.EnvMockProcess)
	if raw == "" {
		return
	}
	cfg := config.Default()
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "loadlab mock process: config: %v\n", err)
		os.Exit(exitUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	svc, url, stopMock, err := mockservice.Start(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadlab mock process: %v\n", err)
		os.Exit(exitUsage)
	}
	r := svc.Replayed
	if err := (mockproc.MockReady{URL: url, Store: r.Path, Writes: r.Writes, TornEnd: r.TornEnd}).Write(os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "loadlab mock process: %v\n", err)
		os.Exit(exitFailed)
	}
	<-ctx.Done()
	if err := stopMock(); err != nil {
		fmt.Fprintf(os.Stderr, "loadlab mock process: %v\n", err)
		os.Exit(exitFailed)
	}
	os.Exit(0)
}
