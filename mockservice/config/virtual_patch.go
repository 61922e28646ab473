package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// VirtualLive is a virtual copy's live settings, as its PATCH
// /admin/config changes them: its station's shape and service time, and
// its token bucket (nil: none).
type VirtualLive struct {
	Live
	Rate *TokenBucket
}

// Live is the copy's live settings at start (with its defaults).
func (v Virtual) Live() VirtualLive {
	v = v.WithDefaults()
	return VirtualLive{Live: Live{Station: v.Station, Service: v.Service}, Rate: v.Rate}
}

// virtualSettings are a copy's live settings, as its patch names them:
// the station's, and its token bucket's rate.
var virtualSettings = append(slices.Clone(stationSettings), "rate")

// rateSettings are a token bucket's live settings.
var rateSettings = []string{"per_second", "burst"}

// ApplyVirtualPatch applies a virtual copy's PATCH /admin/config body
// (YAML or JSON) to its live settings: under the copy's name, any subset
// of the station's settings as ApplyPatch takes them (workers, queue,
// reject_status, service) and "rate": any of the token bucket's
// per_second and burst, for a copy that has one. The whole body is
// validated before anything changes; an error names the field
// ("payments.rate.burst: 0 must be ≥ 1"). live is not changed.
func ApplyVirtualPatch(body []byte, name string, live VirtualLive) (VirtualLive, error) {
	if err := knownSettings(body, []string{name}, virtualSettings); err != nil {
		return live, err
	}
	var doc map[string]map[string]yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return live, fmt.Errorf("body: %v", err)
	}
	rate, hasRate := doc[name]["rate"]
	delete(doc[name], "rate")
	rest, err := yaml.Marshal(doc)
	if err != nil {
		return live, fmt.Errorf("body: %v", err)
	}
	out, _, err := applyPatch(rest, map[string]Live{name: live.Live})
	if err != nil {
		return live, err
	}
	next := VirtualLive{Live: out[name], Rate: live.Rate}
	if hasRate {
		if next.Rate, err = patchRate(&rate, live.Rate); err != nil {
			return live, fmt.Errorf("%s.rate%w", name, err)
		}
	}
	return next, nil
}

// patchRate is the token bucket cur with the patch n applied; its error
// starts with the field below rate (".burst: …") or ": ".
func patchRate(n *yaml.Node, cur *TokenBucket) (*TokenBucket, error) {
	if cur == nil {
		return nil, fmt.Errorf(": this copy has no token bucket (its settings give no rate)")
	}
	var keys map[string]any
	if err := n.Decode(&keys); err != nil {
		return nil, fmt.Errorf(": give a map of settings (%s)", strings.Join(rateSettings, ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !slices.Contains(rateSettings, k) {
			return nil, fmt.Errorf(".%s: not a live setting (one of %s)", k, strings.Join(rateSettings, ", "))
		}
	}
	var p struct {
		PerSecond *float64 `yaml:"per_second"`
		Burst     *int     `yaml:"burst"`
	}
	if err := decodeStrict(n, &p); err != nil {
		return nil, fmt.Errorf(": %v", err)
	}
	b := *cur
	if p.PerSecond != nil {
		b.PerSecond = *p.PerSecond
	}
	if p.Burst != nil {
		b.Burst = *p.Burst
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf(".%w", err)
	}
	return &b, nil
}
