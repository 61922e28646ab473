// Package own holds what an experiment on one's own services runs
// against, as loaded from the files its experiment file names: the
// pipeline, each dependency's virtual copy as fitted from its probe, the
// strategies of one's own, and the changes a scenario (or a phase of a
// phased one) makes to copies; and the live settings that give a copy
// such a change. experiments/design reads and validates the files.
package own

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/experiments/phases"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/field"
)

// Own is an experiment's own services as loaded from the files its
// experiment file names: the pipeline, each dependency's virtual copy as
// fitted from its probe, what each fit said, and the strategy files. The
// results keep it, so that a check needs none of those files.
type Own struct {
	Pipeline *pipeline.Pipeline `json:"pipeline"`
	// Copies are the fitted copies, by dependency, listening on a loopback
	// port of the system's choosing.
	Copies map[string]config.Virtual `json:"copies"`
	// Fit is what each copy's fit said of how it read its probe.
	Fit map[string][]string `json:"fit,omitempty"`
	// Strategies are the strategy files' strategies, by their names in
	// strategy_files.
	Strategies map[string]strategy.Strategy `json:"strategies,omitempty"`
}

// Strategy is the strategy of one's own called name: a strategy file's
// or one given inline (o may be nil).
func (o *Own) Strategy(name string) (strategy.Strategy, bool) {
	if o == nil {
		return strategy.Strategy{}, false
	}
	st, ok := o.Strategies[name]
	return st, ok
}

// Real are the pipeline's dependencies without a virtual copy: their
// calls go to their base_url, a real service, whose counts the runs are
// not reconciled with.
func (o *Own) Real() []string {
	var out []string
	for _, d := range o.Pipeline.Names() {
		if _, ok := o.Copies[d]; !ok {
			out = append(out, d)
		}
	}
	return out
}

// Write is the pipeline's write: the dependency of its last step.
func (o *Own) Write() string { return o.Pipeline.Write() }

// CopyChange is what a scenario changes in one virtual copy, each a
// multiple of the copy as fitted from its probe (absent: unchanged):
// ServiceTime multiplies every service time (3: three times as slow),
// Workers the workers (rounded, at least 1), Queue the queue slots
// (rounded; 0: none), Rate the token bucket's rate (a copy fitted with
// one).
type CopyChange struct {
	ServiceTime *float64 `yaml:"service_time,omitempty" json:"service_time,omitempty"`
	Workers     *float64 `yaml:"workers,omitempty" json:"workers,omitempty"`
	Queue       *float64 `yaml:"queue,omitempty" json:"queue,omitempty"`
	Rate        *float64 `yaml:"rate,omitempty" json:"rate,omitempty"`
}

// ChangeKeys are CopyChange's keys, as a file writes them.
var ChangeKeys = []string{"service_time", "workers", "queue", "rate"}

// Apply is v with the change made.
func (ch CopyChange) Apply(v config.Virtual) config.Virtual {
	if f := ch.ServiceTime; f != nil {
		v.Service = v.Service.Scaled(*f)
	}
	if f := ch.Workers; f != nil {
		v.Station.Workers = max(1, int(math.Round(float64(v.Station.Workers)**f)))
	}
	if f := ch.Queue; f != nil && v.Station.Queue != config.UnboundedQueue {
		v.Station.Queue = int(math.Round(float64(v.Station.Queue) * *f))
	}
	if f := ch.Rate; f != nil && v.Rate != nil {
		r := *v.Rate
		r.PerSecond *= *f
		v.Rate = &r
	}
	return v
}

// DecodeChange decodes one copy's change, refusing keys it does not know.
func DecodeChange(v *yaml.Node) (CopyChange, error) {
	var ch CopyChange
	if v.Kind != yaml.MappingNode {
		return ch, fmt.Errorf("give the copy's changes (%s), each a multiple of the copy as probed", strings.Join(ChangeKeys, ", "))
	}
	for j := 0; j+1 < len(v.Content); j += 2 {
		if k := v.Content[j].Value; !slices.Contains(ChangeKeys, k) {
			return ch, fmt.Errorf("%s: unknown change%s (one of %s)", k, didYouMean(k, ChangeKeys), strings.Join(ChangeKeys, ", "))
		}
	}
	if err := v.Decode(&ch); err != nil {
		return ch, fmt.Errorf("give each change as a number: %v", err)
	}
	return ch, nil
}

// PhaseChanges is a phase's set read as the copies' changes, by
// dependency.
func PhaseChanges(ph phases.Phase) (map[string]CopyChange, error) {
	out := map[string]CopyChange{}
	for _, dep := range slices.Sorted(maps.Keys(ph.Set)) {
		ch, err := ChangeOf(ph.Set[dep])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dep, err)
		}
		out[dep] = ch
	}
	return out, nil
}

// ChangeOf is one copy's change as a phase's set gives it (decoded as
// DecodeChange decodes a scenario's).
func ChangeOf(v any) (CopyChange, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return CopyChange{}, err
	}
	return DecodeChange(&n)
}

// CopyPatch is PATCH /admin/config's body that gives the copy called
// name v's live settings: its workers, queue slots, service time and
// token bucket.
func CopyPatch(name string, v config.Virtual) map[string]any {
	set := map[string]any{"workers": v.Station.Workers, "queue": v.Station.Queue, "service": phases.ServiceBody(v.Service)}
	if v.Rate != nil {
		set["rate"] = map[string]any{"per_second": v.Rate.PerSecond, "burst": v.Rate.Burst}
	}
	return map[string]any{name: set}
}

func didYouMean(k string, names []string) string {
	if c := field.Closest(k, names); c != "" {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}
