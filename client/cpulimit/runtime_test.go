package cpulimit

import (
	"os"
	"path/filepath"
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
