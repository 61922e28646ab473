package deploy

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// composeCommand is the machine's Compose tool: the docker compose plugin,
// else docker-compose.
func composeCommand(t *testing.T) []string {
	t.Helper()
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return []string{"docker-compose"}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Compose tool under CI")
	}
	t.Skip("no Compose tool")
	return nil
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// The real docker-compose.yml, brought up with the machine's Compose tool
// at a fast time scale and a small matrix, then taken down with volumes and
// orphans. The image is built as make up builds it, with no pull.
func TestComposeSmoke(t *testing.T) {
	t.Parallel() // beside the other container tests: it checks states and limits, not speed
	requireDocker(t)
	compose := composeCommand(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("make", "-C", root, "image").CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	name := fmt.Sprintf("smoke-%d", time.Now().UnixNano())
	project := "loadlab" + strings.ReplaceAll(name, "-", "")
	env := append(os.Environ(), "LOADLAB_RUNS=3", "LOADLAB_RECORDS=5", "LOADLAB_CALIBRATION_RUNS=0", "LOADLAB_TIME_SCALE=0.05",
		"LOADLAB_RESULTS_NAME="+name, fmt.Sprintf("MOCK_PORT=%d", freePort(t)), "CLIENT_CPUS=1")
	run := func(args ...string) ([]byte, error) {
		cmd := exec.Command(compose[0], append(append(compose[1:], "-p", project, "-f", filepath.Join(root, "docker-compose.yml")), args...)...)
		cmd.Env, cmd.Dir = env, root
		return cmd.CombinedOutput()
	}
	t.Cleanup(func() {
		if out, err := run("down", "--volumes", "--remove-orphans"); err != nil {
			t.Errorf("compose down: %v\n%s", err, out)
		}
		os.RemoveAll(filepath.Join(root, "results", name))
	})
	out, err := run("up", "--no-build", "--abort-on-container-exit", "--exit-code-from", "client", "mock", "mock1", "client")
	if err != nil {
		t.Fatalf("compose up: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "GOMAXPROCS") {
		t.Errorf("the client did not print what the runtime gave it:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(root, "results", name, "results.json"))
	if err != nil {
		t.Fatalf("no results file: %v\n%s", err, out)
	}
	var res struct {
		Runs []struct {
			Status    string `json:"status"`
			Reason    string `json:"reason"`
			Mechanism string `json:"mechanism"`
			Client    struct {
				GOMAXPROCS int      `json:"gomaxprocs"`
				CPUQuota   *float64 `json:"cpu_quota"`
			} `json:"client"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) == 0 {
		t.Fatal("no runs")
	}
	for _, r := range res.Runs {
		if r.Status != "valid" {
			t.Errorf("run %s: %s", r.Status, r.Reason)
			continue
		}
		if r.Client.CPUQuota == nil || *r.Client.CPUQuota != 1 || !strings.HasPrefix(r.Mechanism, "inherited") {
			t.Errorf("client saw quota %v under %q; want 1 CPU inherited from the container", r.Client.CPUQuota, r.Mechanism)
		}
	}
}
