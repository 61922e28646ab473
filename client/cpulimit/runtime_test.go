package cpulimit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCgroupQuota(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  float64
		ok    bool
	}{
		{"v2 one cpu", map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/cpu.max": "100000 100000\n"}, 1, true},
		{"v2 no limit", map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/cpu.max": "max 100000\n"}, 0, false},
		{"v2 nested, tighter parent", map[string]string{"proc/self/cgroup": "0::/a/b\n",
			"sys/fs/cgroup/a/b/cpu.max": "150000 100000\n", "sys/fs/cgroup/a/cpu.max": "50000 100000\n"}, 0.5, true},
		{"v1 half cpu", map[string]string{"proc/self/cgroup": "4:cpu,cpuacct:/\n",
			"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "50000\n", "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n"}, 0.5, true},
		{"v1 unlimited", map[string]string{"proc/self/cgroup": "4:cpu,cpuacct:/\n",
			"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n"}, 0, false},
		{"nothing readable", map[string]string{}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for p, c := range tt.files {
				writeFile(t, filepath.Join(root, p), c)
			}
			got, _, ok := cgroupQuota(root)
			if ok != tt.ok || got != tt.want {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestQuotaForPeople(t *testing.T) {
	one := 1.0
	if got := (Runtime{CPUQuota: &one, QuotaSource: "cgroup v1 /x"}).Quota(); got != "1 CPUs (cgroup v1 /x)" {
		t.Errorf("got %q", got)
	}
	if got := (Runtime{}).Quota(); got != "none" {
		t.Errorf("no quota: got %q", got)
	}
}

// An inherited setting imposes nothing; a cpuset is an affinity to that
// many of the CPUs this process may use, and asking for more than exist
// is an error naming both counts.
func TestPrepare(t *testing.T) {
	l, err := Prepare(Setting{Inherit: true}, "t")
	if err != nil || len(l.Env) != 0 || !strings.HasPrefix(l.Mechanism, "inherited") || l.Kind != Inherited || KindOf(l.Mechanism) != Inherited {
		t.Errorf("inherit: %+v, %v", l, err)
	}
	l.Cleanup()
	l, err = Prepare(Setting{Cpuset: 1}, "t")
	if err != nil || len(l.Env) != 1 || !strings.HasPrefix(l.Env[0], envAffinity+"=") || !strings.HasPrefix(l.Mechanism, "affinity cpus ") ||
		l.Kind != Affinity || KindOf(l.Mechanism) != Affinity {
		t.Errorf("cpuset 1: %+v, %v", l, err)
	}
	l.Cleanup()
	if _, err := Prepare(Setting{Cpuset: 4096}, "t"); err == nil || !strings.Contains(err.Error(), "cpuset 4096") {
		t.Errorf("cpuset 4096: %v", err)
	}
}

// Results written before they kept a run's kind of limit have it from the
// words that always began with it.
func TestKindOf(t *testing.T) {
	for text, want := range map[string]Kind{
		"cgroup v1 cpu.cfs_quota_us 100000 / 100000": Cgroup, "cgroup v2 cpu.max 50000 100000": Cgroup,
		"affinity cpus 0": Affinity, "inherited (CPU quota none, 2 CPUs)": Inherited, "": "", "something else": "",
	} {
		if got := KindOf(text); got != want {
			t.Errorf("KindOf(%q) = %q, want %q", text, got, want)
		}
	}
}
