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

	grace time.Duration // a stopped process's time to exit before it is killed
	mu    sync.Mutex
	proc  *proc // the one last started
}

// StartMockProcess starts cfg's mock service as a child process on a
// loopback port of the system's choosing, with its store in a new
// temporary directory under StoreParent().
func StartMockProcess(bin string, cfg config.Config) (*MockProcess, error) {
	return startMockProcess(bin, cfg, stopGrace)
}

// startMockProcess is StartMockProcess with a stopped process's grace.
func startMockProcess(bin string, cfg config.Config, grace time.Duration) (*MockProcess, error) {
	dir, err := os.MkdirTemp(StoreParent(), "loadlab-store-")
	if err != nil {
		return nil, fmt.Errorf("mock process: store directory: %w", err)
	}
	cfg.Store = filepath.Join(dir, "records.wal")
	cfg.Listen = "127.0.0.1:0"
	m := &MockProcess{bin: bin, cfg: cfg, Dir: dir, grace: grace}
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

// stopGrace is how long the process, asked to stop (SIGTERM: it closes
// its store and exits), has before it is killed (SIGKILL).
const stopGrace = 10 * time.Second

// proc is one start of the process. Its command is bound to a context
// whose end asks it to stop (SIGTERM) and kills it grace later (os/exec's
// Cancel and WaitDelay), as the runner stops its client; exited closes
// once its output is read to its end and it is waited for, in drain, the
// one place it is.
type proc struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	exited chan struct{}
}

// start starts the process with seed and waits for its base URL.
func (m *MockProcess) start(seed uint32) error {
	cfg := m.cfg
	cfg.Seed = seed
	raw, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, m.bin)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = m.grace
	cmd.Env = append(os.Environ(), EnvMockProcess+"="+string(raw))
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return fmt.Errorf("mock process: %w", err)
	}
	p := &proc{cmd: cmd, cancel: cancel, exited: make(chan struct{})}
	lines := make(chan string, 1)
	go p.drain(out, lines)
	select {
	case first := <-lines:
		ready, err := readMockReady(first)
		if err != nil {
			p.kill()
			return fmt.Errorf("mock process did not start: %s", cmp.Or(strings.TrimSpace(stderr.String()), err.Error()))
		}
		m.mu.Lock()
		m.proc, m.URL, m.Replayed = p, ready.URL, ready.Replayed()
		m.mu.Unlock()
		return nil
	case <-time.After(30 * time.Second):
		p.kill()
		return errors.New("mock process did not print its address within 30 s")
	}
}

// drain sends the process's first line of output on first, reads the rest
// to its end and then waits for the process: os/exec closes the pipe in
// Wait, so reading must be done first, and a process blocked on a full
// pipe would never exit.
func (p *proc) drain(out io.Reader, first chan<- string) {
	defer close(p.exited)
	defer p.cancel() // after Wait: it only releases the context
	sc := bufio.NewScanner(out)
	line := ""
	if sc.Scan() {
		line = sc.Text()
	}
	first <- line
	_, _ = io.Copy(io.Discard, out)
	_ = p.cmd.Wait()
}

// kill ends a process that did not start (SIGKILL) and waits for it.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// stop ends the process with sig and waits for it to exit, or for ctx to
// end. SignalKill kills it at once: the crash a restart simulates. Any
// other signal ends its context: it is asked to stop (SIGTERM) and killed
// if it has not exited after the grace.
func (p *proc) stop(ctx context.Context, sig phases.Signal) error {
	select {
	case <-p.exited: // already gone (an earlier restart failed to start it)
		return nil
	default:
	}
	if sig == phases.SignalKill {
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("mock process: signal %s: %w", sig, err)
		}
	} else {
		p.cancel()
	}
	select {
	case <-p.exited:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Restart stops the process with signal (SignalTerm: asked, and killed
// after a grace if it has not exited; SignalKill: killed at once), waits
// for it to exit, and starts it again on the same address with seed: the
// store it replays holds every write it had acknowledged.
func (m *MockProcess) Restart(ctx context.Context, sig phases.Signal, seed uint32) (replayed string, err error) {
	m.mu.Lock()
	p := m.proc
	m.mu.Unlock()
	if err := p.stop(ctx, sig); err != nil {
		return "", err
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

// Stop ends the process gracefully (SIGTERM, and SIGKILL after the grace)
// and removes its store.
func (m *MockProcess) Stop() error {
	m.mu.Lock()
	p := m.proc
	m.mu.Unlock()
	defer os.RemoveAll(m.Dir)
	if p == nil {
		return nil
	}
	_ = p.stop(context.Background(), phases.SignalTerm)
	return nil
}
