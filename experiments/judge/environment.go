package judge

import (
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
