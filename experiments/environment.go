package experiments

import (
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/loadlab/loadlab/client/cpulimit"
)

// Environment records where the experiment ran.
type Environment struct {
	GoVersion  string           `json:"go_version"`
	GOMAXPROCS int              `json:"gomaxprocs"`
	NumCPU     int              `json:"num_cpu"`
	Runtime    cpulimit.Runtime `json:"runtime"`
	CPUModel   string           `json:"cpu_model"`
	Kernel     string           `json:"kernel"`
	GitCommit  string           `json:"git_commit,omitempty"`
	Hostname   string           `json:"hostname"`
}

// ReadEnvironment describes the machine and the runner process.
func ReadEnvironment() Environment {
	e := Environment{GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
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
	return e
}
