package runner

import (
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/loadlab/loadlab/client/cpulimit"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// ReadEnvironment describes the machine and the runner process.
func ReadEnvironment() resultsfile.Environment {
	e := resultsfile.Environment{GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
		Runtime: cpulimit.ReadRuntime()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		e.GitCommit = strings.TrimSpace(string(out))
	}
	e.Hostname, _ = os.Hostname()
	if exe, err := os.Executable(); err == nil {
		e.BinarySHA256, _ = design.FileSHA256(exe)
	}
	return e
}
