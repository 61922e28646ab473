package deploy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/mocktest"

	"github.com/loadlab/loadlab/mockservice/config"
)

// requireTool finds a program of Debian's prometheus package; its absence
// fails under CI, where .ci/run installs it.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("runs %s as a child process; make test runs it", name)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed; .ci/run installs Debian's prometheus package", name)
		}
		t.Skipf("%s not installed (apt-get install prometheus)", name)
	}
	return p
}

func TestPrometheusConfigIsValid(t *testing.T) {
	promtool := requireTool(t, "promtool")
	if out, err := exec.Command(promtool, "check", "config", "prometheus.yml").CombinedOutput(); err != nil {
		t.Errorf("promtool check config: %v\n%s", err, out)
	}
}

// query asks Prometheus for an instant vector and returns the first value.
func query(base, q string) (string, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return "", err
	}
	if len(r.Data.Result) == 0 {
		return "", fmt.Errorf("no result for %s", q)
	}
	return fmt.Sprint(r.Data.Result[0].Value[1]), nil
}

// A real Prometheus (Debian's package) scrapes the real mock service on
// loopback with deploy/prometheus.yml's mock job, and sees what happened.
func TestRealPrometheusScrapesTheMock(t *testing.T) {
	t.Parallel() // mostly waiting for scrapes
	prom := requireTool(t, "prometheus")
	cfg := config.Default()
	cfg.Profile, cfg.TimeScale = config.ProfileSlowWrite, 2 // 300 ms writes: all 13 overlap
	mockURL := mocktest.Start(t, mocktest.Options{Config: cfg}).URL
	mockAddr := strings.TrimPrefix(mockURL, "http://")

	// deploy/prometheus.yml with its targets pointed at loopback.
	conf, err := os.ReadFile("prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(conf), `"mock:8080"`, fmt.Sprintf("%q", mockAddr), 1)
	text = strings.Replace(text, `"client:9090"`, `"127.0.0.1:1"`, 1)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://" + promAddr

	eventually := func(what, q, want string) {
		t.Helper()
		deadline := time.Now().Add(45 * time.Second)
		var got string
		for time.Now().Before(deadline) {
			if v, err := query(base, q); err == nil {
				if got = v; got == want {
					return
				}
			}
			time.Sleep(250 * time.Millisecond)
		}
		t.Fatalf("%s: %s is %q, want %q", what, q, got, want)
	}
	eventually("records workers", `loadlab_mock_workers{service="records"}`, "6")

	var wg sync.WaitGroup
	for i := range 13 {
		wg.Go(func() {
			resp, err := http.Post(mockURL+"/records", "application/json", strings.NewReader(fmt.Sprintf(`{"id":"p%d","complete":true}`, i)))
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	eventually("rejected writes", `loadlab_mock_requests_total{service="records",outcome="rejected"}`, "1")
	eventually("offered concurrency", `loadlab_mock_offered_concurrency_high_water{service="records"}`, "13")
}
