package config

import (
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/mockservice/yamlfile"
)

// Override is one setting given on a command line: it changes a Config,
// or says why it cannot.
type Override func(*Config) error

// Load returns the settings: Default, then the YAML file at path over them
// (LoadFile; none when path is empty), then the overrides in the order
// given, validated. Its error is LoadFile's, an override's as the override
// returned it, or Validate's after "config: " (a *field.Error names the
// setting).
func Load(path string, overrides ...Override) (Config, error) {
	c := Default()
	if path != "" {
		if err := LoadFile(path, &c); err != nil {
			return c, err
		}
	}
	for _, o := range overrides {
		if err := o(&c); err != nil {
			return c, err
		}
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

// LoadFile reads YAML from path over c: keys present in the file replace
// c's values (a profile named in the file replaces that profile whole);
// unknown keys are errors.
func LoadFile(path string, c *Config) error { return decodeFile(path, c) }

// decodeFile reads the YAML file at path over v, strictly.
func decodeFile(path string, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return fmt.Errorf("config %s: larger than %d bytes", path, maxConfigBytes)
	}
	if _, err := yamlfile.Decode(path, data, v); err != nil {
		return fmt.Errorf("config %w", err) // "config FILE:LINE: field: problem"
	}
	return nil
}

// LoadCopies reads virtual copies' settings from the YAML file at path
// (unknown keys are errors), with their defaults, validated; a
// validation error is "config: " and a *field.Error naming the setting
// ("copies[0].station.workers").
func LoadCopies(path string) (Copies, error) {
	var c Copies
	if err := decodeFile(path, &c); err != nil {
		return c, err
	}
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

// YAML returns c as a YAML document that LoadFile reads back; the admin
// token is left out.
func (c Config) YAML() ([]byte, error) {
	c.AdminToken = ""
	out, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return out, nil
}
