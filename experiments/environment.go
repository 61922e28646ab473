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
	// BinarySHA256 is the SHA-256 of the runner's own executable (which
	// every client run re-executes): loadlab merge refuses shards run by
	// different binaries.
	BinarySHA256 string `json:"binary_sha256,omitempty"`
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
	if exe, err := os.Executable(); err == nil {
		e.BinarySHA256, _ = FileSHA256(exe)
	}
	return e
}
