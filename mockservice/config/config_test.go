package config_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/config"
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
		})
	}
	ok := config.Default()
	ok.Listen, ok.AdminToken = "0.0.0.0:8080", "t"
	if err := ok.Validate(); err != nil {
		t.Errorf("public address with a token: %v", err)
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
