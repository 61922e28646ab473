// Package cpulimit owns the CPU limits of a process: it reads what the Go
// runtime and the kernel gave it (GOMAXPROCS, NumCPU, the cgroup quota, v2
// or v1) for reports, and imposes a quota or an affinity on a child process
// for the experiment runner.
package cpulimit

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Runtime is what the Go runtime and the kernel gave this process.
//
// Since Go 1.25, the default GOMAXPROCS under a cgroup CPU quota is the quota
// rounded up but at least 2, while a cpuset (CPU affinity) of one CPU gives
// 1. .NET's ProcessorCount gives 1 in both cases. So "one CPU" can mean
// GOMAXPROCS 2 or 1 depending on how it was imposed.
type Runtime struct {
	GOMAXPROCS int `json:"gomaxprocs"`
	NumCPU     int `json:"num_cpu"`
	// CPUQuota is the cgroup CPU limit in CPUs (quota / period), nil when
	// none is set or none is readable.
	CPUQuota *float64 `json:"cpu_quota"`
	// QuotaSource says where CPUQuota was read ("cgroup v2 <file>",
	// "cgroup v1 <dir>"), or "none".
	QuotaSource string `json:"cpu_quota_source"`
}

// Quota describes the CPU quota for people: "1 CPUs (cgroup v1 …)" or
// "none".
func (r Runtime) Quota() string {
	if r.CPUQuota == nil {
		return "none"
	}
	return fmt.Sprintf("%g CPUs (%s)", *r.CPUQuota, r.QuotaSource)
}

// ReadRuntime reads the runtime's view and the cgroup CPU quota.
func ReadRuntime() Runtime {
	r := Runtime{GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(), QuotaSource: "none"}
	if q, src, ok := cgroupQuota("/"); ok {
		r.CPUQuota, r.QuotaSource = &q, src
	}
	return r
}

// cgroupQuota finds the tightest CPU quota on the process's cgroup path,
// v2 first, then v1. root prefixes every path (tests use a fake tree).
func cgroupQuota(root string) (float64, string, bool) {
	groups := readSelfCgroups(filepath.Join(root, "proc/self/cgroup"))
	if p, ok := groups[""]; ok { // cgroup v2: "0::/path"
		best, src, found := 0.0, "", false
		for dir := filepath.Join(root, "sys/fs/cgroup", p); ; dir = filepath.Dir(dir) {
			if q, ok := readV2(filepath.Join(dir, "cpu.max")); ok && (!found || q < best) {
				best, src, found = q, "cgroup v2 "+filepath.Join(dir, "cpu.max"), true
			}
			if dir == filepath.Join(root, "sys/fs/cgroup") || dir == "/" || dir == "." {
				break
			}
		}
		if found {
			return best, src, true
		}
	}
	for _, ctrl := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
		p, ok := groups[ctrl]
		if !ok {
			continue
		}
		for _, base := range []string{filepath.Join(root, "sys/fs/cgroup", ctrl, p), filepath.Join(root, "sys/fs/cgroup", ctrl)} {
			quota, okq := readInt(filepath.Join(base, "cpu.cfs_quota_us"))
			period, okp := readInt(filepath.Join(base, "cpu.cfs_period_us"))
			if okq && okp && quota > 0 && period > 0 {
				return float64(quota) / float64(period), "cgroup v1 " + base, true
			}
		}
	}
	return 0, "", false
}

// readSelfCgroups maps controller list to path from /proc/self/cgroup.
func readSelfCgroups(path string) map[string]string {
	out := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 {
			out[parts[1]] = parts[2]
		}
	}
	return out
}

func readV2(path string) (float64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return 0, false
	}
	quota, err1 := strconv.ParseFloat(f[0], 64)
	period, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || period <= 0 || quota <= 0 {
		return 0, false
	}
	return quota / period, true
}

func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}
