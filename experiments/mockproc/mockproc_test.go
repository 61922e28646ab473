package mockproc

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/config"
)

// The mock process's standard output is read to its end before the
// process is waited for: a child that prints far more than a pipe holds
// after its ready line (1 MiB, where a pipe holds 64 KiB) writes all of
// it and exits, and its ready line reads back whole though more followed
// it at once. The child is a shell script standing in for the binary; no
// mock service is started. Were the output not drained, the child would
// block on its pipe and never exit: the test would fail after 30 s.
func TestMockProcessOutputIsReadToItsEnd(t *testing.T) {
	dir := t.TempDir()
	done := filepath.Join(dir, "done")
	bin := filepath.Join(dir, "mock")
	// Builtins only: one process, which Stop signals and waits for,
	// and no other to hold its pipes open.
	script := "#!/bin/sh\nset -e\n" +
		`printf '%s\n' '{"url":"http://127.0.0.1:4242","store":"records.wal","writes":3}'` + "\n" +
		"line=$(printf '%063d' 0)\ni=0\n" +
		"while [ $i -lt 16384 ]; do printf '%s\\n' \"$line\"; i=$((i + 1)); done\n" + // 1 MiB: 16384 lines of 64 bytes
		": > '" + done + "'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := StartMockProcess(bin, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	if want := "store records.wal: 3 accepted writes replayed"; m.URL != "http://127.0.0.1:4242" || m.Replayed != want {
		t.Errorf("ready line read as %q, %q; want http://127.0.0.1:4242, %q", m.URL, m.Replayed, want)
	}
	m.mu.Lock()
	exited := m.proc.exited
	m.mu.Unlock()
	select {
	case <-exited:
	case <-time.After(30 * time.Second): // a child blocked on a pipe nobody reads never exits
		t.Fatal("the child did not exit: its output was not read to its end")
	}
	if _, err := os.Stat(done); err != nil {
		t.Errorf("the child did not write all it printed: %v", err)
	}
}

// The runner's store goes where a slow disk sync cannot stall the writes:
// $LOADLAB_STORE_DIR, else /dev/shm when it is a tmpfs (this machine's and
// Docker's), else the temporary directory.
func TestStoreParent(t *testing.T) {
	want := os.TempDir()
	var fs syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &fs) == nil && int64(fs.Type) == tmpfsMagic {
		want = "/dev/shm"
	}
	t.Setenv(EnvStoreDir, "")
	if got := StoreParent(); got != want {
		t.Errorf("StoreParent() = %q, want %q", got, want)
	}
	dir := t.TempDir()
	t.Setenv(EnvStoreDir, dir)
	if got := StoreParent(); got != dir {
		t.Errorf("with %s=%s: %q", EnvStoreDir, dir, got)
	}
}
