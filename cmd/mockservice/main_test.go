package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

// The test binary doubles as the command when LOADLAB_RUN_MAIN is set, so
// the signal test exercises the real main without a separate build.
func TestMain(m *testing.M) {
	if os.Getenv("LOADLAB_RUN_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestBadFlagsExitTwoNamingTheField(t *testing.T) {
	dir := t.TempDir()
	badYAML := dir + "/bad.yaml"
	if err := os.WriteFile(badYAML, []byte("records:\n  workers: -3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noProfiles := dir + "/no-profiles.yaml"
	if err := os.WriteFile(noProfiles, []byte("profiles: null\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"zero workers", []string{"--records-workers", "0"}, "records.workers"},
		{"not a number", []string{"--enrichment-queue", "x"}, "-enrichment-queue"},
		{"bad duration", []string{"--slow-write-time", "fast"}, "-slow-write-time"},
		{"zero read-header timeout", []string{"--read-header-timeout", "0s"}, "read_header_timeout"},
		{"unknown profile", []string{"--profile", "nope"}, "healthy, slow-enrichment, slow-write"},
		{"public without token", []string{"--listen", "0.0.0.0:9"}, `config: admin_token: required when listen address "0.0.0.0:9" is not loopback (set --admin-token)`},
		{"flag over a file without its profile", []string{"--config", noProfiles, "--slow-write-time", "9ms"}, `--slow-write-time: profile "slow-write" is not defined`},
		{"config file field", []string{"--config", badYAML}, "records.workers"},
		{"missing config file", []string{"--config", dir + "/none.yaml"}, "no such file"},
		{"unknown flag", []string{"--wat"}, "wat"},
		{"stray argument", []string{"extra"}, "extra"},
		{"unwritable store", []string{"--store", dir + "/no-such-dir/store"}, "store: open " + dir + "/no-such-dir/store"},
		{"too many instances", []string{"--instances", "65"}, "instances: 65 must be in [1, 64]"},
		{"no instances", []string{"--instances", "0"}, "instances: 0 must be in [1, 64]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and a message containing %q", code, stderr.String(), tt.want)
			}
			if strings.Count(strings.TrimSpace(stderr.String()), "\n") > 0 {
				t.Errorf("stderr has more than one line: %q", stderr.String())
			}
		})
	}
}

func TestFlagsOverrideConfigFile(t *testing.T) {
	path := t.TempDir() + "/c.yaml"
	if err := os.WriteFile(path, []byte("records:\n  workers: 3\n  queue: 4\n  reject_status: 429\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := parseConfig([]string{"--config", path, "--records-workers", "5", "--slow-write-time", "90ms"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Records.Workers != 5 || cfg.Records.Queue != 4 || cfg.Records.RejectStatus != 429 {
		t.Errorf("records %+v; want workers 5 from the flag, queue 4 and 429 from the file", cfg.Records)
	}
	if got := cfg.Profiles["slow-write"].Records.Value; got != 90*time.Millisecond {
		t.Errorf("slow-write time %v, want 90ms", got)
	}
}

// The read-header timeout is a config field with its flag: default 5 s,
// from the file, and the flag over the file.
func TestReadHeaderTimeout(t *testing.T) {
	path := t.TempDir() + "/c.yaml"
	if err := os.WriteFile(path, []byte("read_header_timeout: 2s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 5 * time.Second},
		{[]string{"--config", path}, 2 * time.Second},
		{[]string{"--config", path, "--read-header-timeout", "300ms"}, 300 * time.Millisecond},
	} {
		cfg, _, err := parseConfig(tt.args, &bytes.Buffer{})
		if err != nil || cfg.ReadHeaderTimeout != tt.want {
			t.Errorf("%q: read-header timeout %v, %v; want %v", tt.args, cfg.ReadHeaderTimeout, err, tt.want)
		}
	}
}

func TestHelpExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "--admin-token") && !strings.Contains(stdout.String(), "-admin-token") {
		t.Errorf("exit %d, help %q", code, stdout.String())
	}
}

// Real time: SIGTERM while a write is in service; the write completes and
// the process exits 0.
func TestSIGTERMDrainsThenExitsZero(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--listen", "127.0.0.1:0", "--healthy-write-time", "1s")
	cmd.Env = append(os.Environ(), "LOADLAB_RUN_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no start line: %v (%s)", err, stderr.String())
	}
	url := strings.Fields(strings.TrimPrefix(line, "mockservice listening on "))[0]
	got := make(chan int, 1)
	var replied time.Time
	go func() {
		resp, err := http.Post(url+"/records", "application/json", strings.NewReader(`{"id":"a","complete":true}`))
		replied = time.Now()
		if err != nil {
			got <- -1
			return
		}
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	// SIGTERM once the write is in service, as the server's metrics say.
	mock := api.Client{BaseURL: url}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := mock.Scrape(context.Background())
		if err == nil && st.Stations[api.Records].Busy == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the write never went into service: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := <-got; code != http.StatusCreated {
		t.Errorf("in-flight write got %d, want 201", code)
	}
	if !replied.After(signalled) {
		t.Error("the write finished before SIGTERM: nothing was drained")
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v, want 0 (%s)", err, stderr.String())
	}
}

// --instances 3: the start-up lines name the instances, a write to
// /i/2 is served by instance 2 alone, and SIGTERM drains and exits 0.
func TestInstancesFlag(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--listen", "127.0.0.1:0", "--instances", "3")
	cmd.Env = append(os.Environ(), "LOADLAB_RUN_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("no start line: %v (%s)", err, stderr.String())
	}
	url := strings.Fields(strings.TrimPrefix(line, "mockservice listening on "))[0]
	second, _ := r.ReadString('\n')
	if !strings.HasPrefix(second, "3 independent instances, under "+url+"/i/0 … "+url+"/i/2") {
		t.Errorf("second line %q", second)
	}
	go io.Copy(io.Discard, r)
	resp, err := http.Post(url+"/i/2/records", "application/json", strings.NewReader(`{"id":"a","complete":true}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for k, want := range []int{0, 0, 1} {
		st, err := api.Client{BaseURL: fmt.Sprintf("%s/i/%d", url, k)}.Scrape(context.Background())
		if err != nil || st.StoredWrites != want || resp.StatusCode != http.StatusCreated {
			t.Errorf("instance %d: %d stored (%v), write answered %d", k, st.StoredWrites, err, resp.StatusCode)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v, want 0 (%s)", err, stderr.String())
	}
}
