package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// The small locked matrix the swarm runs: 2 strategies × 1 scenario × 8
// runs under the task's own CPU limit, as experiments/container.yaml runs
// under a pod's; long enough per shard for a task to be killed mid-way.
const (
	swarmSpec = `name: swarm
records: 100
runs: 8
time_scale: 0.25
call_timeout: 20s
permit_timeout: 10s
seed: 1
strategies: [C2, C4]
scenarios: [slow-write]
cpus:
  - {name: container, inherit: true}
`
	swarmHypotheses = `rules: paired-v2
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
    claim: C2, with 32 records in flight and no write budget, offers more than 6 concurrent writes.
    source: test
    metric: peak_concurrent_writes
    cell: {strategy: C2, scenario: slow-write, cpu: container}
    op: ">"
    threshold: 6
`
)

// swarmCPUs is each task's CPU limit and reservation in the tests: the
// mock and two shards reserve three quarters of the machine's CPUs (1.5
// of 2), so that every task fits on the one node.
func swarmCPUs() float64 { return min(0.5, float64(runtime.NumCPU())/4) }

// swarmLabel marks a node's swarm as the test's own: one left by a test
// that was stopped before its cleanup (go test's timeout) is left and
// made again, not taken for a user's.
const swarmLabel = "loadlab-test-swarm"

// ownSwarm makes this Docker engine a single-node swarm on loopback for
// the test and leaves it afterwards. A swarm the test did not create is
// never touched: the test is skipped (failed under CI, whose machine has
// none).
func ownSwarm(t *testing.T) {
	t.Helper()
	state, err := exec.Command("docker", "info", "--format", "{{.Swarm.LocalNodeState}}").Output()
	if err != nil {
		t.Fatalf("docker info: %v", err)
	}
	if s := strings.TrimSpace(string(state)); s == "active" && ownLabel() {
		if out, err := exec.Command("docker", "swarm", "leave", "--force").CombinedOutput(); err != nil {
			t.Fatalf("leaving the swarm an earlier test made: %v\n%s", err, out)
		}
	} else if s != "inactive" {
		if os.Getenv("CI") != "" {
			t.Fatalf("this Docker engine is already in a swarm (%s) that the test did not create; CI needs an engine in none", s)
		}
		t.Skipf("this Docker engine is already in a swarm (%s): the test uses only a swarm of its own", s)
	}
	if out, err := exec.Command("docker", "swarm", "init", "--advertise-addr", "127.0.0.1").CombinedOutput(); err != nil {
		t.Fatalf("docker swarm init: %v\n%s", err, out)
	}
	if out, err := exec.Command("docker", "node", "update", "--label-add", swarmLabel+"=1", nodeID()).CombinedOutput(); err != nil {
		t.Errorf("labelling the node: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("docker", "swarm", "leave", "--force").CombinedOutput(); err != nil {
			t.Errorf("docker swarm leave: %v\n%s", err, out)
		}
	})
}

// nodeID is this engine's node in its swarm.
func nodeID() string {
	out, _ := exec.Command("docker", "info", "--format", "{{.Swarm.NodeID}}").Output()
	return strings.TrimSpace(string(out))
}

// ownLabel says whether this node carries swarmLabel.
func ownLabel() bool {
	out, err := exec.Command("docker", "node", "inspect", nodeID(), "--format", "{{index .Spec.Labels \""+swarmLabel+"\"}}").Output()
	return err == nil && strings.TrimSpace(string(out)) == "1"
}

// swarmScript runs deploy/swarm/loadlab-swarm.sh with args, and returns
// its standard error (its progress and loadlab merge's summary).
func swarmScript(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "bash", append([]string{"swarm/loadlab-swarm.sh"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("loadlab-swarm.sh %s: %v\n%s", args[0], err, stderr.String())
	}
	return stderr.String()
}

// The experiment and the load test on a real orchestrator: a single-node
// Docker swarm the test creates, deploy/swarm/loadlab-swarm.sh running
// the mock service as a service and each shard, or load segment, as a
// one-task replicated job under equal CPU limits and reservations,
// read-only root, non-root. Shard 0's task is killed after its first run:
// the script says so, swarm restarts it, and it resumes from its run log.
// The merge gives one machine's runs (cell, run, seed) and verdicts; the
// merged segments one generator's schedule, second by second, and the
// answers of the requests they sent.
func TestSwarm(t *testing.T) {
	// Its load segments, under a CPU limit each, fell 6 of 100 arrivals
	// behind when the machine was loaded (the one generator beside them
	// none): how many it reaches on time is logged, not asserted.
	requireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	bctx := buildContext(t)
	image := fmt.Sprintf("loadlab-test:swarm%d", time.Now().UnixNano())
	if out, err := exec.CommandContext(ctx, "docker", "build", "-q", "-f", filepath.Join(bctx, "Dockerfile.local"), "-t", image, bctx).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })
	ownSwarm(t)
	loadlab := filepath.Join(bctx, "out/static/loadlab")
	node, _ := exec.Command("docker", "info", "--format", "{{.Name}}").Output()
	t.Run("experiment", func(t *testing.T) { swarmExperiment(ctx, t, image, loadlab, strings.TrimSpace(string(node))) })
	t.Run("load segments", func(t *testing.T) { swarmSegments(ctx, t, image, loadlab) })
}

func swarmExperiment(ctx context.Context, t *testing.T, image, loadlab, node string) {
	work := t.TempDir()
	spec, hyp := filepath.Join(work, "spec.yaml"), filepath.Join(work, "h.yaml")
	for p, content := range map[string]string{spec: swarmSpec, hyp: swarmHypotheses} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sp, err := design.LoadSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := design.Preregister(hyp, sp, time.Now()); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("lt%d", time.Now().UnixNano()%1e9)
	out := filepath.Join(work, "out")
	t.Cleanup(func() {
		_ = exec.Command("bash", "swarm/loadlab-swarm.sh", "down", "--name", name).Run()
		_ = exec.Command("docker", "volume", "rm", name+"-results").Run()
	})
	kctx, stop := context.WithCancel(ctx)
	killed := make(chan string, 1)
	go func() { killed <- killAfterFirstRun(kctx, t, name+"-shard-0", name+"-results") }()
	defer func() { stop(); <-killed }() // if the script fails the test
	cpus := fmt.Sprint(swarmCPUs())
	stderr := swarmScript(ctx, t, "experiment", "--name", name, "--image", image, "--shards", "2", "--cpus", cpus, "--mock-cpus", cpus,
		"--file", spec, "--hypotheses", hyp, "--out", out, "--timeout", "300")
	stop()
	task := <-killed
	killed <- task
	if task == "" {
		t.Fatal("shard 0's task was not killed mid-way")
	}
	if !strings.Contains(stderr, name+"-shard-0: task "+task) || !strings.Contains(stderr, "non-zero exit (137)") {
		t.Errorf("the script does not say that shard 0's task %s was killed:\n%s", task, stderr)
	}
	m, err := resultsfile.ReadResults(filepath.Join(out, "merged", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(work, "whole")
	if b, err := exec.CommandContext(ctx, loadlab, "experiment", "--file", spec, "--hypotheses", hyp, "--out", whole, "--json-lines").CombinedOutput(); err != nil {
		t.Fatalf("the whole experiment on this machine: %v\n%s", err, b)
	}
	w, err := resultsfile.ReadResults(filepath.Join(whole, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := exec.CommandContext(ctx, loadlab, "merge", "--out", filepath.Join(work, "refused"), whole).CombinedOutput(); err == nil || !strings.Contains(string(b), "is not a shard's partial results") {
		t.Errorf("merging the whole run as a shard: %v: %s", err, b)
	}
	sameRunsAndVerdicts(t, m, w)
	for _, sh := range m.Shards {
		env := sh.Environment
		rt := env.Runtime
		// Go 1.25+: GOMAXPROCS is the quota rounded up, at least 2
		// where the machine has 2 CPUs.
		if rt.CPUQuota == nil || *rt.CPUQuota != swarmCPUs() || rt.GOMAXPROCS != min(2, runtime.NumCPU()) || env.Hostname != node {
			t.Errorf("shard %d: CPU quota %s, GOMAXPROCS %d, host %q; want swarm's limit of %g CPUs, GOMAXPROCS %d, node %q",
				sh.Index, rt.Quota(), rt.GOMAXPROCS, env.Hostname, swarmCPUs(), min(2, runtime.NumCPU()), node)
		}
		t.Logf("shard %d on node %s: GOMAXPROCS %d, NumCPU %d, CPU quota %s, %d runs in %d attempt(s), %.1f s", sh.Index, env.Hostname,
			rt.GOMAXPROCS, rt.NumCPU, rt.Quota(), sh.Runs, max(1, len(sh.Attempts)), sh.Finished.Sub(sh.Started).Seconds())
	}
	if a := m.Shards[0].Attempts; len(a) != 2 || a[0].Runs == 0 || a[0].Runs+a[1].Runs != m.Shards[0].Runs {
		t.Errorf("shard 0's attempts %+v; want the killed task's runs, then the rest in the restarted one", a)
	}
}

// killAfterFirstRun kills the task of the job svc once it has logged a
// run (in its run log, on the volume's folder on this node, or in the
// service's log), and returns the task's id; "" if ctx ended first.
func killAfterFirstRun(ctx context.Context, t *testing.T, svc, volume string) string {
	for ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		if !loggedARun(svc, volume) {
			continue
		}
		ids, _ := exec.Command("docker", "ps", "--filter", "label=com.docker.swarm.service.name="+svc,
			"--format", `{{.ID}} {{.Label "com.docker.swarm.task.id"}}`).Output()
		f := strings.Fields(string(ids))
		if len(f) < 2 {
			continue
		}
		if out, err := exec.Command("docker", "kill", f[0]).CombinedOutput(); err != nil {
			t.Errorf("docker kill %s: %v: %s", f[0], err, out)
			return ""
		}
		return f[1]
	}
	return ""
}

// loggedARun says whether the shard of the job svc has logged a run: in
// its run log (the experiment's line, then a run's) in the volume's
// folder on this node (/results/RUN/shard-0), or in the service's log.
func loggedARun(svc, volume string) bool {
	mount, _ := exec.Command("docker", "volume", "inspect", "--format", "{{.Mountpoint}}", volume).Output()
	if m := strings.TrimSpace(string(mount)); m != "" {
		logs, _ := filepath.Glob(filepath.Join(m, "*", "shard-0", "run-log.jsonl"))
		for _, l := range logs {
			if b, _ := os.ReadFile(l); bytes.Count(b, []byte("\n")) >= 2 {
				return true
			}
		}
	}
	logs, _ := exec.Command("docker", "service", "logs", "--raw", svc).Output()
	return bytes.Contains(logs, []byte(`{"kind":"run"`))
}

// sameRunsAndVerdicts holds merged results to one machine's: the same
// runs (cell, run, seed), all valid, and the same verdicts, all supported.
func sameRunsAndVerdicts(t *testing.T, m, w *resultsfile.Results) {
	t.Helper()
	type key struct {
		Cell design.Cell
		Run  int
		Seed uint32
	}
	keys := func(r *resultsfile.Results) (out []key) {
		for _, run := range r.Runs {
			if !run.Valid() {
				t.Errorf("%s run %d: %s: %s", run.Cell, run.Run, run.Status, run.Reason)
			}
			out = append(out, key{run.Cell, run.Run, run.Seed})
		}
		return out
	}
	if a, b := keys(m), keys(w); !slices.Equal(a, b) {
		t.Errorf("merged runs %v; one machine's %v", a, b)
	}
	if len(m.Verdicts) != 3 || len(w.Verdicts) != 3 {
		t.Fatalf("%d merged verdicts, %d one machine's", len(m.Verdicts), len(w.Verdicts))
	}
	for i, v := range m.Verdicts {
		if v.ID != w.Verdicts[i].ID || v.Verdict != w.Verdicts[i].Verdict || v.Verdict != resultsfile.Supported {
			t.Errorf("%s: merged %s, one machine %s", v.ID, v.Verdict, w.Verdicts[i].Verdict)
		}
		t.Logf("%s %s: %s", v.ID, v.Verdict, v.Claim)
	}
}

func swarmSegments(ctx context.Context, t *testing.T, image, loadlab string) {
	work := t.TempDir()
	name := fmt.Sprintf("ls%d", time.Now().UnixNano()%1e9)
	out := filepath.Join(work, "out")
	t.Cleanup(func() { _ = exec.Command("bash", "swarm/loadlab-swarm.sh", "down", "--name", name).Run() })
	cpus := fmt.Sprint(swarmCPUs())
	swarmScript(ctx, t, "load", "--name", name, "--image", image, "--shards", "2", "--cpus", cpus, "--mock-cpus", cpus,
		"--time-scale", "0.25", "--start-in", "15", "--out", out, "--timeout", "300", "--", "--duration", "20")
	read := func(path string) loadgen.Result {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var r loadgen.Result
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return r
	}
	m := read(filepath.Join(out, "merged.json"))
	one := filepath.Join(work, "one.json")
	url := startMockService(t, filepath.Join(filepath.Dir(loadlab), "mockservice"), "--time-scale=0.25", "--admin-token=t")
	b, err := exec.CommandContext(ctx, loadlab, "load", "--target", url+"/enrich", "--admin-token", "t", "--time-scale", "0.25",
		"--duration", "20", "--json").Output()
	if err != nil {
		t.Fatalf("one generator on this machine: %v", err)
	}
	if err := os.WriteFile(one, b, 0o644); err != nil {
		t.Fatal(err)
	}
	w := read(one)
	// The same schedule, exactly, every arrival in one state, joined with
	// the server; every request sent got the answer the one generator's
	// got (on time, or rejected as often within 2). Which arrivals a task
	// under its CPU limit reached on time (Behind) is the generator's
	// punctuality on this machine, not the merge: logged, not asserted
	// (the generator's headroom is measured in client/loadgen's benchmarks).
	near := func(a, b int) bool { return a-b <= 2 && b-a <= 2 }
	if m.MergedSegments != 2 || m.Scheduled != w.Scheduled || m.Requests+m.Dropped+m.Behind != m.Scheduled || !m.ServerJoined ||
		m.Requests == 0 || m.OnTime+m.Rejected != m.Requests || w.OnTime+w.Rejected != w.Requests ||
		!near(m.Rejected, w.Rejected) || m.TransportErrors != 0 {
		t.Errorf("merged segments: %d merged, %d scheduled, %d requests + %d dropped + %d behind, joined %v, %d on time, %d rejected, %d transport errors; "+
			"one generator: %d scheduled, %d requests, %d on time, %d rejected", m.MergedSegments, m.Scheduled, m.Requests, m.Dropped, m.Behind, m.ServerJoined,
			m.OnTime, m.Rejected, m.TransportErrors, w.Scheduled, w.Requests, w.OnTime, w.Rejected)
	}
	// Second by second, the same arrivals were due (counted by the time
	// they were scheduled at, whatever became of them).
	due := func(r loadgen.Result) (out []int) {
		for _, s := range r.Timeline {
			out = append(out, s.Arrivals+s.Dropped+s.Behind)
		}
		return out
	}
	if a, b := due(m), due(w); !slices.Equal(a, b) {
		t.Errorf("arrivals due per second: merged %v, one generator %v", a, b)
	}
	t.Logf("2 segments on the swarm: %d scheduled, %d on time, %d rejected, %d behind (max send lag %.1f ms); one generator: %d, %d, %d, %d",
		m.Scheduled, m.OnTime, m.Rejected, m.Behind, m.MaxSendLagMs, w.Scheduled, w.OnTime, w.Rejected, w.Behind)
}

// startMockService starts the mock service binary bin on loopback with
// args, and returns its URL.
func startMockService(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--listen=127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	f := strings.Fields(strings.TrimPrefix(line, "mockservice listening on "))
	if err != nil || len(f) == 0 {
		t.Fatalf("mock service: %v: %q", err, line)
	}
	return f[0]
}

// Bad input exits 2 with one line naming it, before the script asks
// Docker anything.
func TestSwarmScriptBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"experiment", "--shards", "0"}, "--shards 0: a whole number in [1, 64]"},
		{[]string{"experiment", "--name", "Bad_Name"}, "--name Bad_Name: lower-case letters"},
		{[]string{"experiment", "--cpus", "-1"}, `"-1" is not a positive number`},
		{[]string{"experiment", "--file", "spec.yaml"}, "--file and --hypotheses go together"},
		{[]string{"experiment", "--file", "nope.yaml", "--hypotheses", "nope-h.yaml"}, "cannot read nope.yaml"},
		{[]string{"load", "--wat"}, "unknown option --wat"},
	} {
		cmd := exec.Command("bash", append([]string{"swarm/loadlab-swarm.sh"}, c.args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		msg := strings.TrimSpace(stderr.String())
		if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: %v, %q; want exit 2 and one line with %q", c.args, err, msg, c.want)
		}
	}
}
