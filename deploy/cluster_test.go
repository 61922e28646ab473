package deploy

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/judge"
)

// The small locked matrix the played cluster runs: 2 strategies × 1
// scenario × 3 runs under the container's own CPU limit, as
// experiments/container.yaml runs under a pod's.
const (
	clusterSpec = `name: cluster
records: 30
runs: 3
time_scale: 0.25
call_timeout: 20s
permit_timeout: 10s
seed: 1
strategies: [C2, C4]
scenarios: [slow-write]
cpus:
  - {name: container, inherit: true}
`
	clusterHypotheses = `rules: paired-v2
hypotheses:
  - id: P1
    claim: C4 gets no write 503s under slow writes.
    source: test
    metric: write_rejections
    cell: {strategy: C4, scenario: slow-write, cpu: container}
    op: "=="
    threshold: 0
  - id: P2
    claim: C4 offers at most 6 concurrent writes.
    source: test
    metric: peak_concurrent_writes
    cell: {strategy: C4, scenario: slow-write, cpu: container}
    op: "<="
    threshold: 6
  - id: P3
    claim: C2, with 30 records in flight and no write budget, offers more than 6 concurrent writes.
    source: test
    metric: peak_concurrent_writes
    cell: {strategy: C2, scenario: slow-write, cpu: container}
    op: ">"
    threshold: 6
`
)

// The cluster's part played by the Docker engine, as the Kubernetes
// manifests lay it out: one mock container serving one instance per
// shard (the Deployment), two client containers each under its own CPU
// limit (1 and 2 CPUs), read-only root filesystem, non-root, running
// shard 0/2 and 1/2 of a small locked matrix with --json-lines (the
// Indexed Job's pods), and a third running the matrix whole against an
// instance of its own. loadlab merge on the two containers' logs (what
// kubectl logs collects) gives the whole run's runs (cell, run, seed) and
// verdicts; each shard records the GOMAXPROCS, NumCPU and quota its
// container saw.
func TestDockerPlayedCluster(t *testing.T) {
	requireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	bctx := buildContext(t)
	tag := fmt.Sprintf("cluster%d", time.Now().UnixNano())
	image := "loadlab-test:" + tag
	if out, err := exec.CommandContext(ctx, "docker", "build", "-q", "-f", filepath.Join(bctx, "Dockerfile.local"), "-t", image, bctx).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })

	work := t.TempDir()
	for name, content := range map[string]string{"spec.yaml": clusterSpec, "h.yaml": clusterHypotheses} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec, err := design.LoadSpec(filepath.Join(work, "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := design.Preregister(filepath.Join(work, "h.yaml"), spec, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}

	nw, err := network.New(ctx)
	testcontainers.CleanupNetwork(t, nw)
	if err != nil {
		t.Fatal(err)
	}
	locked := func(hc *container.HostConfig) {
		hc.ReadonlyRootfs = true
		hc.Tmpfs = map[string]string{"/tmp": "uid=65532,gid=65532", "/results": "uid=65532,gid=65532"}
		hc.Binds = []string{work + ":/work:ro"}
	}
	mock, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:          image,
			Entrypoint:     []string{"/mockservice", "--listen=0.0.0.0:8080", "--admin-token=t", "--time-scale=0.25", "--instances=3"},
			ExposedPorts:   []string{"8080/tcp"},
			Networks:       []string{nw.Name},
			NetworkAliases: map[string][]string{nw.Name: {"loadlab-mock"}},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.ReadonlyRootfs = true
				hc.NanoCPUs = 1e9
			},
			WaitingFor: wait.ForHTTP("/healthz").WithPort("8080/tcp").WithStartupTimeout(time.Minute),
		},
		Started: true,
	})
	testcontainers.CleanupContainer(t, mock)
	if err != nil {
		t.Fatal(err)
	}

	// A client container: the experiment's own arguments, as the Job's.
	runExperiment := func(instance int, cpus float64, extra ...string) string {
		args := append([]string{"/loadlab", "experiment", "--file=/work/spec.yaml", "--hypotheses=/work/h.yaml",
			fmt.Sprintf("--target=http://loadlab-mock:8080/i/%d", instance), "--admin-token=t", "--wait=60s",
			"--json-lines", "--out=/results/out"}, extra...)
		c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
			ContainerRequest: testcontainers.ContainerRequest{
				Image:      image,
				Entrypoint: args,
				Networks:   []string{nw.Name},
				HostConfigModifier: func(hc *container.HostConfig) {
					locked(hc)
					hc.NanoCPUs = int64(cpus * 1e9)
				},
				WaitingFor: wait.ForExit().WithExitTimeout(5 * time.Minute),
			},
			Started: true,
		})
		testcontainers.CleanupContainer(t, c)
		if err != nil {
			t.Errorf("instance %d: %v", instance, err)
			return ""
		}
		out, stderr, err := containerOutput(ctx, c.GetContainerID())
		if err != nil {
			t.Errorf("instance %d: docker logs: %v", instance, err)
			return ""
		}
		state, err := c.State(ctx)
		if err != nil || state.ExitCode != 0 {
			t.Errorf("instance %d: exit %v (%v): %s", instance, state, err, tail(stderr))
			return ""
		}
		path := filepath.Join(t.TempDir(), fmt.Sprintf("instance-%d.log", instance))
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	logs := make([]string, 3)
	var wg sync.WaitGroup
	wg.Go(func() { logs[0] = runExperiment(0, 1, "--shard=0/2") })
	wg.Go(func() { logs[1] = runExperiment(1, 2, "--shard=1/2") })
	wg.Go(func() { logs[2] = runExperiment(2, 1) })
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	loadlab := filepath.Join(bctx, "out/static/loadlab")
	merged := filepath.Join(t.TempDir(), "merged")
	if out, err := exec.CommandContext(ctx, loadlab, "merge", "--out", merged, logs[1], logs[0]).CombinedOutput(); err != nil {
		t.Fatalf("loadlab merge: %v\n%s", err, out)
	}
	m, err := judge.ReadResults(filepath.Join(merged, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(t.TempDir(), "whole")
	if out, err := exec.CommandContext(ctx, loadlab, "merge", "--out", whole, logs[2]).CombinedOutput(); err == nil || !strings.Contains(string(out), "is not a shard's partial results") {
		t.Errorf("merging the whole run as a shard: %v: %s", err, out)
	}
	w, err := judge.ReadResultsLog(logs[2])
	if err != nil {
		t.Fatal(err)
	}

	type key struct {
		Cell design.Cell
		Run  int
		Seed uint32
	}
	keys := func(r *judge.Results) (out []key) {
		for _, run := range r.Runs {
			if !run.Valid() {
				t.Errorf("%s run %d: %s: %s", run.Cell, run.Run, run.Status, run.Reason)
			}
			out = append(out, key{run.Cell, run.Run, run.Seed})
		}
		return out
	}
	if a, b := keys(m), keys(w); !slices.Equal(a, b) {
		t.Errorf("merged runs %v; the whole run's %v", a, b)
	}
	if len(m.Verdicts) != 3 || len(w.Verdicts) != 3 {
		t.Fatalf("%d merged verdicts, %d whole", len(m.Verdicts), len(w.Verdicts))
	}
	for i, v := range m.Verdicts {
		if v.ID != w.Verdicts[i].ID || v.Verdict != w.Verdicts[i].Verdict || v.Verdict != judge.Supported {
			t.Errorf("%s: merged %s, whole %s", v.ID, v.Verdict, w.Verdicts[i].Verdict)
		}
	}
	// What each shard's container saw. Go 1.25+: GOMAXPROCS is the quota
	// rounded up, at least 2 where the machine has 2 CPUs.
	for _, sh := range m.Shards {
		rt := sh.Environment.Runtime
		quota := []float64{1, 2}[sh.Index]
		if rt.Quota() == "none" || rt.GOMAXPROCS != min(max(2, int(quota)), runtime.NumCPU()) {
			t.Errorf("shard %d under --cpus=%g: GOMAXPROCS %d, NumCPU %d, quota %s", sh.Index, quota, rt.GOMAXPROCS, rt.NumCPU, rt.Quota())
		}
		t.Logf("shard %d under --cpus=%g: GOMAXPROCS %d, NumCPU %d, CPU quota %s, %d runs, %.1f s", sh.Index, quota,
			rt.GOMAXPROCS, rt.NumCPU, rt.Quota(), sh.Runs, sh.Finished.Sub(sh.Started).Seconds())
	}
	for _, v := range m.Verdicts {
		t.Logf("%s %s: %s", v.ID, v.Verdict, v.Claim)
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
