package cpulimit

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Environment variables that carry a CPU limit into a child process. The
// child applies them at the very start of main and re-executes itself, so
// that the Go runtime it runs starts under the limit and derives its
// default GOMAXPROCS from it.
const (
	envCgroupProcs = "LOADLAB_CHILD_CGROUP_PROCS"
	envAffinity    = "LOADLAB_CHILD_AFFINITY"
)

// Enter applies a CPU limit passed by a parent runner, then re-executes
// the program under it. It returns normally only when there is nothing to
// apply. Call it first thing in main.
func Enter() {
	procs, aff := os.Getenv(envCgroupProcs), os.Getenv(envAffinity)
	if procs == "" && aff == "" {
		return
	}
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "loadlab: entering CPU limit: %v\n", err)
		os.Exit(3)
	}
	if procs != "" {
		if err := os.WriteFile(procs, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			fail(err)
		}
	}
	if aff != "" {
		var set unix.CPUSet
		for _, f := range strings.Split(aff, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				fail(fmt.Errorf("affinity %q", aff))
			}
			set.Set(n)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			fail(err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envCgroupProcs+"=") && !strings.HasPrefix(kv, envAffinity+"=") {
			env = append(env, kv)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		fail(err)
	}
	fail(syscall.Exec(exe, os.Args, env))
}

// Setting is one CPU limit: a quota of CPUs (like docker --cpus), an
// affinity to Cpuset CPUs (like docker --cpuset-cpus), or Inherit: no limit
// of its own, the one this process runs under (a container's). Exactly one
// is set.
type Setting struct {
	CPUs    float64
	Cpuset  int
	Inherit bool
}

// Kind is how a CPU limit is imposed.
type Kind string

// Kinds of CPU limit.
const (
	// Cgroup: a CPU quota in a cgroup of the child's own (v1 or v2).
	Cgroup Kind = "cgroup"
	// Affinity: the child pinned to a number of CPUs.
	Affinity Kind = "affinity"
	// Inherited: no limit of its own: the one its parent runs under.
	Inherited Kind = "inherited"
)

// Kinds lists every Kind, for messages.
var Kinds = []Kind{Cgroup, Affinity, Inherited}

// KindOf is the kind of a Limit's Mechanism as results written before
// they kept the kind describe it (each description begins with its
// kind's name), "" for one that does not.
func KindOf(mechanism string) Kind {
	for _, k := range Kinds {
		if strings.HasPrefix(mechanism, string(k)) {
			return k
		}
	}
	return ""
}

// Limit is how one child process is confined: Env goes into its
// environment, and Cleanup removes what Prepare created once it has exited.
type Limit struct {
	// Kind is how the limit is imposed; Mechanism says it in words:
	// "cgroup v2 …", "cgroup v1 …", "affinity …" or "inherited …".
	Kind      Kind
	Mechanism string
	Env       []string
	Cleanup   func()
}

// Prepare sets up a CPU setting for one child: a quota in a fresh cgroup
// (v2, else v1) when the machine lets us write one, else an affinity to
// ceil(cpus) CPUs; a cpuset is always an affinity. id names the cgroup.
func Prepare(s Setting, id string) (Limit, error) {
	if s.Inherit {
		rt := ReadRuntime()
		return Limit{Kind: Inherited, Mechanism: fmt.Sprintf("inherited (CPU quota %s, %d CPUs)", rt.Quota(), rt.NumCPU), Cleanup: func() {}}, nil
	}
	if s.Cpuset > 0 {
		return affinityLimit(s.Cpuset, "")
	}
	if l, err := cgroupV2Limit(s.CPUs, id); err == nil {
		return l, nil
	}
	if l, err := cgroupV1Limit(s.CPUs, id); err == nil {
		return l, nil
	}
	return affinityLimit(int(math.Ceil(s.CPUs)), " (no writable cgroup cpu controller: quota emulated by affinity)")
}

func affinityLimit(n int, note string) (Limit, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return Limit{}, fmt.Errorf("read affinity: %w", err)
	}
	var cpus []string
	for c := 0; c < 1024 && len(cpus) < n; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, strconv.Itoa(c))
		}
	}
	if len(cpus) < n {
		return Limit{}, fmt.Errorf("cpuset %d: only %d CPUs available", n, len(cpus))
	}
	list := strings.Join(cpus, ",")
	return Limit{Kind: Affinity, Mechanism: "affinity cpus " + list + note, Env: []string{envAffinity + "=" + list}, Cleanup: func() {}}, nil
}

const cfsPeriod = 100000

func cgroupV2Limit(cpus float64, id string) (Limit, error) {
	root := ""
	for _, cand := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if b, err := os.ReadFile(filepath.Join(cand, "cgroup.controllers")); err == nil && strings.Contains(" "+string(b)+" ", " cpu ") {
			root = cand
			break
		}
	}
	if root == "" {
		return Limit{}, errors.New("no cgroup v2 hierarchy with the cpu controller")
	}
	sub, _ := os.ReadFile(filepath.Join(root, "cgroup.subtree_control"))
	if !strings.Contains(" "+strings.TrimSpace(string(sub))+" ", " cpu ") {
		if err := os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), []byte("+cpu"), 0o644); err != nil {
			return Limit{}, err
		}
	}
	dir := filepath.Join(root, "loadlab-"+id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return Limit{}, err
	}
	quota := int(math.Round(cpus * cfsPeriod))
	if err := os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(fmt.Sprintf("%d %d", quota, cfsPeriod)), 0o644); err != nil {
		os.Remove(dir)
		return Limit{}, err
	}
	return Limit{Kind: Cgroup, Mechanism: fmt.Sprintf("cgroup v2 cpu.max %d %d", quota, cfsPeriod),
		Env: []string{envCgroupProcs + "=" + filepath.Join(dir, "cgroup.procs")}, Cleanup: func() { os.Remove(dir) }}, nil
}

func cgroupV1Limit(cpus float64, id string) (Limit, error) {
	var root string
	for _, cand := range []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"} {
		if _, err := os.Stat(filepath.Join(cand, "cpu.cfs_quota_us")); err == nil {
			root = cand
			break
		}
	}
	if root == "" {
		return Limit{}, errors.New("no cgroup v1 cpu controller")
	}
	dir := filepath.Join(root, "loadlab-"+id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return Limit{}, err
	}
	quota := int(math.Round(cpus * cfsPeriod))
	err := os.WriteFile(filepath.Join(dir, "cpu.cfs_period_us"), []byte(strconv.Itoa(cfsPeriod)), 0o644)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte(strconv.Itoa(quota)), 0o644)
	}
	if err != nil {
		os.Remove(dir)
		return Limit{}, err
	}
	return Limit{Kind: Cgroup, Mechanism: fmt.Sprintf("cgroup v1 cpu.cfs_quota_us %d / %d", quota, cfsPeriod),
		Env: []string{envCgroupProcs + "=" + filepath.Join(dir, "cgroup.procs")}, Cleanup: func() { os.Remove(dir) }}, nil
}
