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

// stationPatch is one station's part of a PATCH /admin/config body: any
// subset of its live settings.
type stationPatch struct {
	Workers      *int      `yaml:"workers"`
	Queue        *int      `yaml:"queue"`
	RejectStatus *int      `yaml:"reject_status"`
	Service      yaml.Node `yaml:"service"`
}

// stationSettings are a station's live settings, as a patch names them.
var stationSettings = []string{"workers", "queue", "reject_status", "service"}

// ApplyPatch applies a PATCH /admin/config body (YAML or JSON: any subset
// of each station's workers, queue, reject_status and service, the service
// merged field by field over the station's current one) to live, validated
// in full as the start-up configuration is; an error names the field
// ("records.workers: 0 must be ≥ 1"). The stations are live's keys. live
// is not changed: the result is a new map, with changed listing the
// stations the body names, in the order of their names.
func ApplyPatch(body []byte, live map[string]Live) (out map[string]Live, changed []string, err error) {
	if err := knownSettings(body, slices.Sorted(maps.Keys(live)), stationSettings); err != nil {
		return nil, nil, err
	}
	return applyPatch(body, live)
}

// applyPatch is ApplyPatch once the body's settings are known ones.
func applyPatch(body []byte, live map[string]Live) (out map[string]Live, changed []string, err error) {
	var p map[string]*stationPatch
	dec := yaml.NewDecoder(bytes.NewReader(body))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("body: %v", err)
	}
	out = maps.Clone(live)
	for _, name := range slices.Sorted(maps.Keys(live)) {
		sp := p[name]
		if sp == nil {
			continue
		}
		l := out[name]
		if sp.Workers != nil {
			l.Station.Workers = *sp.Workers
		}
		if sp.Queue != nil {
			l.Station.Queue = *sp.Queue
		}
		if sp.RejectStatus != nil {
			l.Station.RejectStatus = *sp.RejectStatus
		}
		if err := l.Station.Validate(); err != nil {
			return nil, nil, fmt.Errorf("%s.%w", name, err)
		}
		if sp.Service.Kind != 0 {
			if err := decodeStrict(&sp.Service, &l.Service); err != nil {
				return nil, nil, fmt.Errorf("%s.service: %v", name, err)
			}
			if _, err := l.Service.Build(); err != nil {
				return nil, nil, fmt.Errorf("%s.service.%w", name, err)
			}
		}
		out[name] = l
		changed = append(changed, name)
	}
	return out, changed, nil
}

// decodeStrict decodes n over v, field by field, refusing a field v does
// not have.
func decodeStrict(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	return d.Decode(v)
}

// knownSettings names the first station of a patch that is not one of
// stations, or the first setting that is not one of settings:
// "records.slots: unknown setting (...)".
func knownSettings(body []byte, stations, settings []string) error {
	var m map[string]any
	if err := yaml.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("body: %v", err)
	}
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
