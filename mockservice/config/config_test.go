package config_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/field"
)

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name   string
		change func(*config.Config)
		want   string
	}{
		{"zero workers", func(c *config.Config) { c.Records.Workers = 0 }, "records.workers:"},
		{"queue below -1", func(c *config.Config) { c.Enrichment.Queue = -2 }, "enrichment.queue:"},
		{"reject 500", func(c *config.Config) { c.Records.RejectStatus = 500 }, "records.reject_status:"},
		{"unknown profile", func(c *config.Config) { c.Profile = "x" }, `profile: "x" is not one of healthy, slow-enrichment, slow-write`},
		{"public without token", func(c *config.Config) { c.Listen = "0.0.0.0:80" }, "admin_token:"},
		{"all interfaces without token", func(c *config.Config) { c.Listen = ":8080" }, "admin_token:"},
		{"bad listen", func(c *config.Config) { c.Listen = "nope" }, "listen:"},
		{"zero time scale", func(c *config.Config) { c.TimeScale = 0 }, "time_scale:"},
		{"zero read-header timeout", func(c *config.Config) { c.ReadHeaderTimeout = 0 }, "read_header_timeout:"},
		{"bad profile field", func(c *config.Config) {
			p := c.Profiles["slow-write"]
			p.Records.Value = -1
			c.Profiles["slow-write"] = p
		}, "profiles.slow-write.records.value:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Default()
			tt.change(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
			// A setting of the service or a station is a *field.Error
			// naming its path; a profile's distribution, text.
			var fe *field.Error
			if isField := errors.As(err, &fe); isField != !strings.HasPrefix(tt.want, "profiles.") ||
				isField && fe.Field+":" != strings.SplitN(tt.want, " ", 2)[0] {
				t.Errorf("%v: field %+v", err, fe)
			}
		})
	}
	ok := config.Default()
	ok.Listen, ok.AdminToken = "0.0.0.0:8080", "t"
	if err := ok.Validate(); err != nil {
		t.Errorf("public address with a token: %v", err)
	}
}

// Load applies the file over the defaults, then the overrides in order,
// then validates.
func TestLoad(t *testing.T) {
	path := t.TempDir() + "/c.yaml"
	if err := os.WriteFile(path, []byte("records:\n  workers: 3\n  queue: 4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	workers := func(n int) config.Override {
		return func(c *config.Config) error { c.Records.Workers = n; return nil }
	}
	c, err := config.Load(path, workers(5), workers(7))
	if err != nil || c.Records.Workers != 7 || c.Records.Queue != 4 || c.Enrichment.Workers != config.DefaultEnrichmentWorkers {
		t.Errorf("records %+v, %v; want 7 workers from the last override, queue 4 from the file", c.Records, err)
	}
	if c, err := config.Load(""); err != nil || c.Records.Workers != config.DefaultRecordsWorkers {
		t.Errorf("no file: %+v, %v", c.Records, err)
	}
	_, err = config.Load(path, workers(0))
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "records.workers" || err.Error() != "config: records.workers: 0 must be ≥ 1" {
		t.Errorf("invalid after the overrides: %v", err)
	}
	refused := errors.New("refused")
	if _, err := config.Load(path, func(*config.Config) error { return refused }); err != refused {
		t.Errorf("a failing override: %v", err)
	}
	if _, err := config.Load(path + ".none"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("no such file: %v", err)
	}
}

func TestConfigFileRoundTrip(t *testing.T) {
	c := config.Default()
	c.Records.Workers = 9
	out, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/c.yaml"
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	got := config.Default()
	if err := config.LoadFile(path, &got); err != nil {
		t.Fatal(err)
	}
	if got.Records.Workers != 9 || got.Profiles["slow-write"].Records.Value != 150*time.Millisecond {
		t.Errorf("round trip lost values: %+v", got)
	}
	if err := os.WriteFile(path, []byte("records:\n  wokers: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = config.LoadFile(path, &got)
	if err == nil || !strings.Contains(err.Error(), "wokers") {
		t.Errorf("unknown key: got %v, want an error naming it", err)
	}
}
