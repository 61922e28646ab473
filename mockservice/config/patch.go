package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// Live is one station's live settings: its shape and its service-time
// distribution, as PATCH /admin/config changes them.
type Live struct {
	Station Station
	Service latency.Spec
}

// LiveOf is a service's live settings right after it switched to profile.
func (c Config) LiveOf(profile string) map[string]Live {
	p := c.Profiles[profile]
	return map[string]Live{
		api.Enrichment: {Station: c.Enrichment, Service: p.Enrichment},
		api.Records:    {Station: c.Records, Service: p.Records},
	}
}

// patch is a PATCH /admin/config body: any subset of the stations' live
// settings.
type patch struct {
	Enrichment *stationPatch `yaml:"enrichment"`
	Records    *stationPatch `yaml:"records"`
}

type stationPatch struct {
	Workers      *int      `yaml:"workers"`
	Queue        *int      `yaml:"queue"`
	RejectStatus *int      `yaml:"reject_status"`
	Service      yaml.Node `yaml:"service"`
}

// ApplyPatch applies a PATCH /admin/config body (YAML or JSON: any subset
// of each station's workers, queue, reject_status and service, the service
// merged field by field over the station's current one) to live, validated
// in full as the start-up configuration is; an error names the field
// ("records.workers: 0 must be ≥ 1"). live is not changed: the result is a
// new map, with changed listing the stations the body names.
func ApplyPatch(body []byte, live map[string]Live) (out map[string]Live, changed []string, err error) {
	if err := knownSettings(body); err != nil {
		return nil, nil, err
	}
	var p patch
	dec := yaml.NewDecoder(bytes.NewReader(body))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("body: %v", err)
	}
	out = maps.Clone(live)
	for _, c := range []struct {
		name  string
		patch *stationPatch
	}{{api.Enrichment, p.Enrichment}, {api.Records, p.Records}} {
		if c.patch == nil {
			continue
		}
		l, ok := out[c.name]
		if !ok {
			return nil, nil, fmt.Errorf("%s: no such station", c.name)
		}
		if c.patch.Workers != nil {
			l.Station.Workers = *c.patch.Workers
		}
		if c.patch.Queue != nil {
			l.Station.Queue = *c.patch.Queue
		}
		if c.patch.RejectStatus != nil {
			l.Station.RejectStatus = *c.patch.RejectStatus
		}
		if err := l.Station.Validate(); err != nil {
			return nil, nil, fmt.Errorf("%s.%w", c.name, err)
		}
		if c.patch.Service.Kind != 0 {
			b, err := yaml.Marshal(&c.patch.Service)
			if err == nil {
				d := yaml.NewDecoder(bytes.NewReader(b))
				d.KnownFields(true)
				err = d.Decode(&l.Service)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("%s.service: %v", c.name, err)
			}
			if _, err := l.Service.Build(); err != nil {
				return nil, nil, fmt.Errorf("%s.service.%w", c.name, err)
			}
		}
		out[c.name] = l
		changed = append(changed, c.name)
	}
	return out, changed, nil
}

// knownSettings names the first setting of a patch that is not a live
// setting: "records.slots: unknown setting (...)".
func knownSettings(body []byte) error {
	var m map[string]any
	if err := yaml.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("body: %v", err)
	}
	stations := []string{api.Enrichment, api.Records}
	settings := []string{"workers", "queue", "reject_status", "service"}
	for _, st := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(stations, st) {
			return fmt.Errorf("%s: unknown station (one of %s)", st, strings.Join(stations, ", "))
		}
		inner, ok := m[st].(map[string]any)
		if !ok {
			if m[st] == nil {
				continue
			}
			return fmt.Errorf("%s: give a map of settings (%s)", st, strings.Join(settings, ", "))
		}
		for _, k := range slices.Sorted(maps.Keys(inner)) {
			if !slices.Contains(settings, k) {
				return fmt.Errorf("%s.%s: unknown setting (one of %s)", st, k, strings.Join(settings, ", "))
			}
		}
	}
	return nil
}
