// Package mockproc owns the experiment's mock service as a process of its
// own: this binary started again as a child serving the mock service
// (EnvMockProcess), with its store (a write-ahead file) where a slow disk
// sync cannot stall the writes (StoreParent), its ready line (MockReady),
// and its restart, graceful (SIGTERM) or a crash (SIGKILL), on the same
// address with the same store. The runner restarts it through its
// Restarter interface; this package knows nothing of the runner.
package mockproc

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/mockservice/config"
)

// EnvMockProcess, when set in a loadlab binary's environment, makes it
// serve a mock service with the configuration the variable holds (JSON)
// instead of running a command, and print its MockReady as the first
// line of its standard output: the experiment's mock service as a process of
// its own, which the runner can kill and start again.
const EnvMockProcess = "LOADLAB_MOCK_PROCESS_CONFIG"

// MockProcess is the experiment's mock service run as a child process of
// this binary, with a store (write-ahead file) in a temporary directory,
// so that a restart — a graceful one (SIGTERM) or a crash (SIGKILL) —
// keeps every acknowledged write. Restart starts it again on the same
// address.
type MockProcess struct {
	bin string
	cfg config.Config
	// Dir holds the store; URL is the base URL (the same after a restart).
	Dir string
	URL string
	// Replayed is what the store replayed at the last start ("store PATH:
	// N accepted writes replayed", and any torn last line).
	Replayed string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// StartMockProcess starts cfg's mock service as a child process on a
// loopback port of the system's choosing, with its store in a new
// temporary directory under StoreParent().
func StartMockProcess(bin string, cfg config.Config) (*MockProcess, error) {
	dir, err := os.MkdirTemp(StoreParent(), "loadlab-store-")
	if err != nil {
		return nil, fmt.Errorf("mock process: store directory: %w", err)
	}
	cfg.Store = filepath.Join(dir, "records.wal")
	cfg.Listen = "127.0.0.1:0"
	m := &MockProcess{bin: bin, cfg: cfg, Dir: dir}
	if err := m.start(cfg.Seed); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	m.cfg.Listen = strings.TrimPrefix(m.URL, "http://") // restarts take the same address
	return m, nil
}

// EnvStoreDir names the directory in which the runner's mock process keeps
// its store, overriding StoreParent's choice.
const EnvStoreDir = "LOADLAB_STORE_DIR"

// tmpfsMagic is Linux's TMPFS_MAGIC, statfs(2)'s f_type of a tmpfs.
const tmpfsMagic = 0x01021994

// StoreParent is where the runner's mock process keeps its store:
// $LOADLAB_STORE_DIR if set, else /dev/shm when it is a writable tmpfs,
// else the system's temporary directory. The fault the runner injects is
// a crash of the process (SIGKILL), which a write in the page cache
// survives; a store on disk adds what the model has no place for: every
// write waits for fsync under the store's lock after its service, and one
// slow sync of the disk (measured: over 1 s, on this VM's ext4, in the
// first adaptive run) holds every write behind it until the client's call
// timeout.
func StoreParent() string {
	if d := os.Getenv(EnvStoreDir); d != "" {
		return d
	}
	var fs syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &fs) == nil && int64(fs.Type) == tmpfsMagic && syscall.Access("/dev/shm", 2 /* W_OK */) == nil {
		return "/dev/shm"
	}
	return os.TempDir()
}

// start starts the process with seed and waits for its base URL.
func (m *MockProcess) start(seed uint32) error {
	cfg := m.cfg
	cfg.Seed = seed
	raw, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	cmd := exec.Command(m.bin)
	cmd.Env = append(os.Environ(), EnvMockProcess+"="+string(raw))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("mock process: %w", err)
	}
	exited := make(chan struct{})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		first := ""
		if sc.Scan() {
			first = sc.Text()
		}
		lines <- first
		// Keep the pipe drained to its end, then wait: os/exec closes the
		// pipe in Wait, so reading must be done first.
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case first := <-lines:
		ready, err := readMockReady(first)
		if err != nil {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("mock process did not start: %s", cmp.Or(strings.TrimSpace(stderr.String()), err.Error()))
		}
		m.mu.Lock()
		m.cmd, m.exited, m.URL, m.Replayed = cmd, exited, ready.URL, ready.Replayed()
		m.mu.Unlock()
		return nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		return errors.New("mock process did not print its address within 30 s")
	}
}

// Restart stops the process with signal (SignalTerm or SignalKill), waits for it to exit, and starts it again on the same
// address with seed: the store it replays holds every write it had
// acknowledged.
func (m *MockProcess) Restart(ctx context.Context, sig phases.Signal, seed uint32) (replayed string, err error) {
	m.mu.Lock()
	cmd, exited := m.cmd, m.exited
	m.mu.Unlock()
	s := syscall.SIGTERM
	if sig == phases.SignalKill {
		s = syscall.SIGKILL
	}
	select {
	case <-exited: // already gone (an earlier restart failed to start it): start it
	default:
		if err := cmd.Process.Signal(s); err != nil {
			return "", fmt.Errorf("mock process: signal %s: %w", sig, err)
		}
		select {
		case <-exited:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	// The address was ours a moment ago; a new listener may still race
	// with the old one's teardown: try for a while.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err = m.start(seed); err == nil {
			m.mu.Lock()
			defer m.mu.Unlock()
			return m.Replayed, nil
		}
	}
	return "", err
}

// Stop ends the process gracefully and removes its store.
func (m *MockProcess) Stop() error {
	m.mu.Lock()
	cmd, exited := m.cmd, m.exited
	m.mu.Unlock()
	defer os.RemoveAll(m.Dir)
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	return nil
}
