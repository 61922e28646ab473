package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/mockservice/config"
)

// FuzzLoadFile: no file makes LoadFile panic; its errors name the file; and
// a file that loads into a valid configuration round-trips: YAML() of it
// loads back to the same settings (the admin token, which YAML() leaves
// out, aside).
func FuzzLoadFile(f *testing.F) {
	def, err := config.Default().YAML()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(def),
		"records:\n  workers: 3\n  queue: 4\n  reject_status: 429\n",
		"records:\n  wokers: 3\n",
		"read_header_timeout: 300ms\ntime_scale: 0.1\n",
		"time_scale: .nan\n",
		"shutdown_timeout: -1s\n",
		"seed: 4294967296\n",
		"listen: 0.0.0.0:80\nadmin_token: t\n",
		"profile: custom\nprofiles:\n  custom:\n    enrichment: {kind: uniform, min: 1ms, max: 9ms, resolution: 2ms}\n" +
			"    records:\n      kind: mixture\n      components:\n        - {weight: 3, kind: fixed, value: 1ms}\n        - {weight: 1, kind: lognormal, median: 2ms, spread: 0.5}\n",
		"profiles:\n  healthy:\n    enrichment: {kind: fixed, value: 1ms, hang_probability: 0.5, hang_duration: 1s}\n    records: {kind: fixed}\n",
		"profiles: ~\n",
		"", "---\n---\n", "[1, 2]\n", "a: &a [*a, *a]\n", "records: {workers: !!float 1e99}\n", "\x00\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "in.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c := config.Default()
		if err := config.LoadFile(path, &c); err != nil {
			if !strings.HasPrefix(err.Error(), "config "+path) {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if c.Validate() != nil {
			return
		}
		out, err := c.YAML()
		if err != nil {
			t.Fatalf("YAML of a valid configuration: %v", err)
		}
		again := filepath.Join(dir, "out.yaml")
		if err := os.WriteFile(again, out, 0o600); err != nil {
			t.Fatal(err)
		}
		got := config.Default()
		if err := config.LoadFile(again, &got); err != nil {
			t.Fatalf("reading back\n%s: %v", out, err)
		}
		got.AdminToken = c.AdminToken
		if !reflect.DeepEqual(got, c) {
			t.Errorf("round trip changed the configuration:\nloaded  %+v\nwritten\n%s\nread back %+v", c, out, got)
		}
	})
}
