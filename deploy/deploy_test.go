// Package deploy holds the Dockerfiles, the Prometheus configuration and
// the tests that run the project's own images for real: testcontainers-go
// for the CPU limits of single containers, and the machine's Compose tool for
// docker-compose.yml.
package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

func TestMain(m *testing.M) {
	// The Ryuk reaper image cannot be pulled here; every container and
	// network registers its own cleanup instead.
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	// Inside a container (/.dockerenv) testcontainers would reach mapped
	// ports through the default gateway; the engine here publishes them on
	// this machine, so keep every check on loopback.
	os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "localhost")
	os.Exit(m.Run())
}

// requireDocker skips without a Docker engine, except under CI, where its
// absence is a failure.
func requireDocker(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts containers; make test runs it")
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("docker is not usable under CI: %v", err)
		}
		t.Skipf("no Docker engine: %v", err)
	}
}

// buildContext lays out what deploy/Dockerfile.local needs, with static
// binaries built from this checkout, in a temporary folder.
func buildContext(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"out/static", "out/experiments", "out/empty"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "out/static")+"/",
		"github.com/loadlab/loadlab/cmd/mockservice", "github.com/loadlab/loadlab/cmd/loadlab")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, out)
	}
	files, _ := filepath.Glob("../experiments/*.yaml")
	locks, _ := filepath.Glob("../experiments/*.lock")
	for _, f := range append(files, locks...) {
		copyFile(t, f, filepath.Join(dir, "out/experiments", filepath.Base(f)))
	}
	copyFile(t, "Dockerfile.local", filepath.Join(dir, "Dockerfile.local"))
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type runResult struct {
	Strategy             string   `json:"strategy"`
	Records              int      `json:"records"`
	Complete             int      `json:"complete"`
	Incomplete           int      `json:"incomplete"`
	WriteRejected        int      `json:"write_rejected"`
	Failed               int      `json:"failed"`
	WriteRejections      int      `json:"write_rejections"`
	PeakConcurrentWrites int      `json:"peak_concurrent_writes"`
	GOMAXPROCS           int      `json:"gomaxprocs"`
	NumCPU               int      `json:"num_cpu"`
	CPUQuota             *float64 `json:"cpu_quota"`
	PeakRecordsInFlight  int      `json:"peak_records_in_flight"`
}

// Real containers: the image built from this repository, the mock service
// on a fresh network, and client containers under --cpus=1 and under one
// cpuset CPU.
func TestContainersUnderCPULimits(t *testing.T) {
	t.Parallel() // beside the other container tests: it checks limits and counts, not speed
	requireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tag := fmt.Sprintf("t%d", time.Now().UnixNano())
	image := "loadlab-test:" + tag

	nw, err := network.New(ctx)
	testcontainers.CleanupNetwork(t, nw)
	if err != nil {
		t.Fatal(err)
	}
	mock, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			FromDockerfile: testcontainers.FromDockerfile{Context: buildContext(t), Dockerfile: "Dockerfile.local",
				Repo: "loadlab-test", Tag: tag, KeepImage: true},
			Entrypoint:     []string{"/mockservice", "--listen=0.0.0.0:8080", "--admin-token=t", "--time-scale=0.25"},
			ExposedPorts:   []string{"8080/tcp"},
			Networks:       []string{nw.Name},
			NetworkAliases: map[string][]string{nw.Name: {"mock"}},
			WaitingFor:     wait.ForHTTP("/healthz").WithPort("8080/tcp").WithStartupTimeout(time.Minute),
		},
		Started: true,
	})
	testcontainers.CleanupContainer(t, mock)
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })
	if err != nil {
		t.Fatal(err)
	}

	runClient := func(t *testing.T, strategy, profile string, records int, limit func(*container.HostConfig)) runResult {
		t.Helper()
		c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
			ContainerRequest: testcontainers.ContainerRequest{
				Image: image,
				Entrypoint: []string{"/loadlab", "run", "--target=http://mock:8080", "--admin-token=t",
					"--strategy=" + strategy, "--profile=" + profile, fmt.Sprintf("--records=%d", records),
					"--time-scale=0.25", "--json"},
				Networks:           []string{nw.Name},
				HostConfigModifier: limit,
				WaitingFor:         wait.ForExit().WithExitTimeout(2 * time.Minute),
			},
			Started: true,
		})
		testcontainers.CleanupContainer(t, c)
		if err != nil {
			t.Fatal(err)
		}
		state, err := c.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out, stderr, err := containerOutput(ctx, c.GetContainerID())
		if err != nil {
			t.Fatal(err)
		}
		if state.ExitCode != 0 {
			t.Fatalf("client exited %d: %s%s", state.ExitCode, out, stderr)
		}
		var r runResult
		if err := json.Unmarshal(out[strings.IndexByte(string(out), '{'):], &r); err != nil {
			t.Fatalf("client output: %v: %s", err, out)
		}
		if r.Complete+r.Incomplete+r.WriteRejected+r.Failed != records {
			t.Errorf("%s: states do not add up to %d: %+v", strategy, records, r)
		}
		return r
	}
	cpus1 := func(hc *container.HostConfig) { hc.NanoCPUs = 1e9 }
	cpuset0 := func(hc *container.HostConfig) { hc.CpusetCpus = "0" }

	c4 := runClient(t, "C4", "slow-write", 100, cpus1)
	if c4.CPUQuota == nil || *c4.CPUQuota != 1 {
		t.Errorf("--cpus=1: the client read a quota of %v, want 1", c4.CPUQuota)
	}
	// Go 1.25+: the quota rounded up, but at least 2 where the host has 2.
	if want := min(2, runtime.NumCPU()); c4.GOMAXPROCS != want {
		t.Errorf("--cpus=1: GOMAXPROCS %d, want %d", c4.GOMAXPROCS, want)
	}
	if c4.WriteRejections != 0 || c4.PeakConcurrentWrites > 6 {
		t.Errorf("C4 under slow-write: %d write 503s, %d concurrent writes; want 0 and ≤ 6", c4.WriteRejections, c4.PeakConcurrentWrites)
	}
	c2 := runClient(t, "C2", "slow-write", 100, cpus1)
	if c2.WriteRejections == 0 || c2.PeakConcurrentWrites <= 12 {
		t.Errorf("C2 under slow-write: %d write 503s, %d concurrent writes; want some and > 12", c2.WriteRejections, c2.PeakConcurrentWrites)
	}
	c1 := runClient(t, "C1", "healthy", 20, cpuset0)
	if c1.GOMAXPROCS != 1 || c1.PeakRecordsInFlight != 1 || c1.CPUQuota != nil {
		t.Errorf("--cpuset-cpus=0: GOMAXPROCS %d, records in flight %d, quota %v; want 1, 1, none", c1.GOMAXPROCS, c1.PeakRecordsInFlight, c1.CPUQuota)
	}
}

// containerOutput is what a container wrote to its standard output and,
// apart, to its standard error. Apart: Docker splits a line longer than
// 16 KiB (a results line) into parts, and a log of both streams can carry
// a standard-error line between two of them.
func containerOutput(ctx context.Context, id string) (stdout, stderr []byte, err error) {
	var e bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", "logs", id)
	cmd.Stderr = &e
	stdout, err = cmd.Output()
	if err != nil {
		err = fmt.Errorf("docker logs: %w: %s", err, tail(e.Bytes()))
	}
	return stdout, e.Bytes(), err
}

// tail is the end of a container's output, for an error message.
func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
