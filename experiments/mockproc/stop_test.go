package mockproc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/mockservice/config"
)

// TestMain makes this test binary, started as the mock process (with
// EnvMockProcess set), the stand-in for the mock service that the tests of
// Stop and Restart start.
func TestMain(m *testing.M) {
	if raw := os.Getenv(EnvMockProcess); raw != "" {
		os.Exit(standIn(raw))
	}
	os.Exit(m.Run())
}

// envStandIn tells the stand-in how to take SIGTERM: standInIgnores, or
// (unset) exit exitAsked.
const (
	envStandIn     = "LOADLAB_MOCKPROC_STAND_IN"
	standInIgnores = "ignore-term"
	exitAsked      = 3
)

// standIn prints a ready line naming the store it was given and, as its
// count of replayed writes, the seed it was started with; then it waits
// for SIGTERM and exits exitAsked, or, told standInIgnores, takes no
// notice of it. It gives up by itself after a while, so that a test
// that failed leaves no process behind.
func standIn(raw string) int {
	var cfg config.Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "stand-in:", err)
		return 2
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	ignore := os.Getenv(envStandIn) == standInIgnores
	if err := (MockReady{URL: "http://127.0.0.1:4242", Store: cfg.Store, Writes: int(cfg.Seed)}).Write(os.Stdout); err != nil {
		return 2
	}
	giveUp := time.After(5 * time.Minute)
	for {
		select {
		case <-term:
			if !ignore {
				return exitAsked
			}
		case <-giveUp:
			return 4
		}
	}
}

// startStandIn starts the stand-in as the mock process, with grace.
func startStandIn(t *testing.T, seed uint32, grace time.Duration) *MockProcess {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Seed = seed
	m, err := startMockProcess(bin, cfg, grace)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// ended says how p ended: "exit N" or "signal NAME".
func ended(p *proc) string {
	<-p.exited
	ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return fmt.Sprintf("exit %d", ws.ExitStatus())
}

// Stop asks the process to stop (SIGTERM) and kills it (SIGKILL) when it
// has not exited after the grace; it returns once the process is gone,
// either way, and removes the store. The grace of the one that stops
// when asked is far longer than the test may take: it ended by the
// signal, not by the grace.
func TestStopAsksThenKills(t *testing.T) {
	for _, tc := range []struct {
		name, standIn string
		grace         time.Duration
		want          string
	}{
		{"stops when asked", "", time.Hour, fmt.Sprintf("exit %d", exitAsked)},
		{"killed when it does not", standInIgnores, 50 * time.Millisecond, "signal " + syscall.SIGKILL.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(envStandIn, tc.standIn)
			m := startStandIn(t, 1, tc.grace)
			p := m.proc
			stopped := make(chan error, 1)
			go func() { stopped <- m.Stop() }()
			select {
			case err := <-stopped:
				if err != nil {
					t.Errorf("Stop: %v", err)
				}
			case <-time.After(time.Minute): // a process nobody kills never exits
				t.Fatal("Stop did not return: the process was not killed")
			}
			if got := ended(p); got != tc.want {
				t.Errorf("the process ended: %s, want %s", got, tc.want)
			}
			if _, err := os.Stat(m.Dir); !os.IsNotExist(err) {
				t.Errorf("the store's directory %s is still there: %v", m.Dir, err)
			}
		})
	}
}

// A crash restart kills the process at once (SIGKILL), though it would
// stop when asked and its grace is longer than the test may take; a
// graceful one asks it (SIGTERM). Each starts it again with the seed
// given and returns what its store replayed; the store stays where it
// was, and the address with it.
func TestRestartKillsOrAsks(t *testing.T) {
	t.Setenv(envStandIn, "")
	m := startStandIn(t, 1, time.Hour)
	defer m.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a restart waiting out the grace fails, not hangs
	defer cancel()
	store := filepath.Join(m.Dir, "records.wal")
	for _, tc := range []struct {
		sig  phases.Signal
		seed uint32
		want string
	}{
		{phases.SignalKill, 7, "signal " + syscall.SIGKILL.String()},
		{phases.SignalTerm, 9, fmt.Sprintf("exit %d", exitAsked)},
	} {
		old := m.proc
		replayed, err := m.Restart(ctx, tc.sig, tc.seed)
		if err != nil {
			t.Fatalf("restart %s: %v", tc.sig, err)
		}
		if got := ended(old); got != tc.want {
			t.Errorf("restart %s: the process ended: %s, want %s", tc.sig, got, tc.want)
		}
		want := fmt.Sprintf("store %s: %d accepted writes replayed", store, tc.seed)
		if replayed != want || m.Replayed != want || m.URL != "http://127.0.0.1:4242" {
			t.Errorf("restart %s: replayed %q (Replayed %q) at %s, want %q at http://127.0.0.1:4242", tc.sig, replayed, m.Replayed, m.URL, want)
		}
		if m.proc == old {
			t.Errorf("restart %s: no new process", tc.sig)
		}
	}
}
