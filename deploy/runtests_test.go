package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// flakyTest fails the first time it runs and passes after that (its
// marker file says which); when STOLEN is set, the host "takes" half of
// the CPU in the fake /proc/stat while it runs. It sleeps so that
// run-tests.sh's sampler, reading the file once a second, sees the file
// before and after.
const flakyTest = `package flaky

import (
	"os"
	"testing"
	"time"
)

func TestPassesTheSecondTime(t *testing.T) {
	marker := os.Getenv("MARKER")
	if _, err := os.Stat(marker); err == nil {
		return
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if os.Getenv("STOLEN") != "" {
		// 400 ticks more, 200 of them stolen: 50% (the columns: user nice
		// system idle iowait irq softirq steal guest guest_nice).
		if err := os.WriteFile(os.Getenv("PROC_STAT"), []byte("cpu  1200 0 0 0 0 0 0 200 0 0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2500 * time.Millisecond)
	t.Fatal("the first run fails")
}

func TestAlwaysPasses(t *testing.T) {}
`

// make test's runner (run-tests.sh) runs a one-at-a-time package's failed
// tests once more when the host took at least STEAL_RERUN percent of the
// CPU over some 5 seconds of the package's run, and passes the package
// only if they pass then, saying so; on a quiet host the failure stands.
// On a scratch module with one package whose test fails the first time
// only, and a fake /proc/stat.
func TestRunTestsRerunsOnlyWhenTheHostTookTheCPU(t *testing.T) {
	t.Parallel() // a child go build and two 4-second test runs
	script, err := filepath.Abs("run-tests.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		stolen bool
		exit   int
		says   []string
	}{
		{"host took half the CPU", true, 0, []string{
			"--- the host took the CPU while example.com/scratch/flaky ran (steal ",
			"at most 50.0% over 5 s): its failed tests again, alone: TestPassesTheSecondTime",
			"ok  \texample.com/scratch/flaky\t",
			"(TestPassesTheSecondTime failed with steal ",
			"Passed only when run again, after failing while the host took the CPU:\n  example.com/scratch/flaky: TestPassesTheSecondTime",
		}},
		{"quiet host", false, 1, []string{
			"--- FAIL: TestPassesTheSecondTime",
			"FAIL\texample.com/scratch/flaky\t",
			"(steal 0.0% of the CPU time, at most 0.0% over 5 s)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, text := range map[string]string{
				"go.mod":              "module example.com/scratch\n\ngo 1.26\n",
				"flaky/flaky_test.go": flakyTest,
				"proc-stat":           "cpu  1000 0 0 0 0 0 0 0 0 0\n",
			} {
				path := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The script runs the module it sits in: a copy in the scratch
			// module's deploy folder.
			body, err := os.ReadFile(script)
			if err == nil {
				err = os.MkdirAll(filepath.Join(dir, "deploy"), 0o755)
			}
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, "deploy", "run-tests.sh"), body, 0o755)
			}
			if err != nil {
				t.Fatal(err)
			}
			stolen := ""
			if tc.stolen {
				stolen = "1"
			}
			cmd := exec.Command("bash", filepath.Join(dir, "deploy", "run-tests.sh"))
			cmd.Env = append(os.Environ(), "GOWORK=off", "PROC_STAT="+filepath.Join(dir, "proc-stat"),
				"MARKER="+filepath.Join(dir, "marker"), "STEAL_RERUN=10", "STOLEN="+stolen)
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.exit {
				t.Errorf("exit %d, want %d", code, tc.exit)
			}
			for _, s := range tc.says {
				if !strings.Contains(string(out), s) {
					t.Errorf("the output lacks %q", s)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}
