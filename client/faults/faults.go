// Package faults puts network faults between the client and each of its
// dependencies: one in-process TCP proxy per dependency
// (github.com/Shopify/toxiproxy/v2, run as a library), whose toxics add
// latency with jitter, cap bandwidth, reset connections, swallow them
// (blackhole) or close them slowly, each on a share of the connections.
package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/loadlab/loadlab/client/transport"
	"github.com/loadlab/loadlab/mockservice/field"
	"github.com/loadlab/loadlab/mockservice/yamlfile"
)

// Kind is what a fault does, one of the constants below; its text is the
// faults file's kind.
type Kind string

// Kinds of fault.
const (
	Latency   Kind = "latency"    // every answer delayed by latency ± jitter
	Bandwidth Kind = "bandwidth"  // data capped at rate_kbps kilobytes per second
	Reset     Kind = "reset"      // the connection reset (TCP RST) `after` the first data in the fault's direction, which is dropped: the call it carried gets no answer
	Blackhole Kind = "blackhole"  // nothing passes; the connection closed after `after` (0: never)
	SlowClose Kind = "slow_close" // the connection's close delayed by `after`
)

// Kinds lists the kinds, for messages.
var Kinds = []Kind{Latency, Bandwidth, Reset, Blackhole, SlowClose}

// Direction is which way of a connection a fault acts on; its text is the
// faults file's direction.
type Direction string

// Directions of a fault. The zero Direction is Downstream.
const (
	Downstream Direction = "downstream" // the dependency's answers
	Upstream   Direction = "upstream"   // the client's requests
)

// Fault is one network fault on the path to one dependency.
type Fault struct {
	Dependency string        `yaml:"dependency" json:"dependency"`
	Kind       Kind          `yaml:"kind" json:"kind"`
	Latency    time.Duration `yaml:"latency,omitempty" json:"latency,omitempty"`
	Jitter     time.Duration `yaml:"jitter,omitempty" json:"jitter,omitempty"`
	RateKBps   int64         `yaml:"rate_kbps,omitempty" json:"rate_kbps,omitempty"`
	After      time.Duration `yaml:"after,omitempty" json:"after,omitempty"`
	// Probability is the share of connections the fault applies to (0:
	// all of them, as 1).
	Probability float64 `yaml:"probability,omitempty" json:"probability,omitempty"`
	// Direction is Downstream (the default, when empty) or Upstream.
	Direction Direction `yaml:"direction,omitempty" json:"direction,omitempty"`
}

// File is a faults file: a list of faults.
type File struct {
	Faults []Fault `yaml:"faults" json:"faults"`
}

// Load reads and validates a faults file; errors name the file, the line
// and the field.
func Load(path string) ([]Fault, error) {
	var f File
	root, err := yamlfile.Read(path, &f)
	if err != nil {
		return nil, err
	}
	for i, ft := range f.Faults {
		if fe, ok := field.Of(ft.Validate()); ok {
			return nil, &yamlfile.Error{File: path, Line: yamlfile.Line(root, "faults", i, fe.Field), Field: fmt.Sprintf("faults.%d.%s", i, fe.Field), Err: fe.Err}
		}
	}
	return f.Faults, nil
}

// Validate checks a fault: its error is a *field.Error naming the bad
// field as the faults file does ("rate_kbps").
func (f Fault) Validate() error {
	switch {
	case f.Dependency == "":
		return field.Errorf("dependency", "missing")
	case !slices.Contains(Kinds, f.Kind):
		return field.Errorf("kind", "%q is not one of %v", f.Kind, Kinds)
	case f.Latency < 0:
		return field.Errorf("latency", "%v must be ≥ 0", f.Latency)
	case f.Jitter < 0 || f.Jitter > f.Latency && f.Kind == Latency:
		return field.Errorf("jitter", "%v must be in [0, latency]", f.Jitter)
	case f.Kind == Latency && f.Latency == 0:
		return field.Errorf("latency", "a latency fault needs latency > 0")
	case f.Kind == Bandwidth && f.RateKBps <= 0:
		return field.Errorf("rate_kbps", "%d must be > 0", f.RateKBps)
	case f.After < 0:
		return field.Errorf("after", "%v must be ≥ 0", f.After)
	case f.Probability < 0 || f.Probability > 1 || f.Probability != f.Probability:
		return field.Errorf("probability", "%v must be in [0, 1]", f.Probability)
	case f.Direction != "" && f.Direction != Downstream && f.Direction != Upstream:
		return field.Errorf("direction", "%q is not downstream or upstream", f.Direction)
	}
	return nil
}

// toxic is the fault as toxiproxy's JSON.
func (f Fault) toxic(i int) ([]byte, error) {
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	attrs := map[string]any{}
	typ := f.Kind
	switch f.Kind {
	case Latency:
		attrs["latency"], attrs["jitter"] = ms(f.Latency), ms(f.Jitter)
	case Bandwidth:
		attrs["rate"] = f.RateKBps
	case Reset:
		typ, attrs["timeout"] = "reset_peer", ms(f.After)
	case Blackhole:
		typ, attrs["timeout"] = "timeout", ms(f.After)
	case SlowClose:
		attrs["delay"] = ms(f.After)
	}
	stream := f.Direction
	if stream == "" {
		stream = Downstream
	}
	toxicity := f.Probability
	if toxicity == 0 {
		toxicity = 1
	}
	return json.Marshal(map[string]any{"name": fmt.Sprintf("%s-%d", f.Kind, i), "type": typ, "stream": stream,
		"toxicity": toxicity, "attributes": attrs})
}

// Proxies are the running proxies, one per dependency.
type Proxies struct {
	proxies map[string]*toxiproxy.Proxy
	// URLs maps each dependency to the base URL that reaches it through its
	// proxy.
	URLs map[string]string
	// Faults are the faults in force (Start's, or the last Set's).
	Faults []Fault
}

// StartFile is Start with the faults of the file at path, read by Load.
func StartFile(path string, upstreams map[string]string) (*Proxies, error) {
	fs, err := Load(path)
	if err != nil {
		return nil, err
	}
	return Start(upstreams, fs)
}

// Start starts a proxy on loopback for every dependency in upstreams
// (dependency → base URL), with the faults that name it, and returns the
// base URLs that go through them. A fault for a dependency not in
// upstreams is an error.
func Start(upstreams map[string]string, faults []Fault) (*Proxies, error) {
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := &Proxies{URLs: map[string]string{}, proxies: map[string]*toxiproxy.Proxy{}}
	if err := check(upstreams, faults); err != nil {
		return nil, err
	}
	for _, dep := range slices.Sorted(maps.Keys(upstreams)) {
		u, err := url.Parse(upstreams[dep])
		if err != nil || u.Host == "" {
			p.Stop()
			return nil, fmt.Errorf("%s: %q is not a base URL", dep, upstreams[dep])
		}
		px := toxiproxy.NewProxy(srv, dep, "127.0.0.1:0", transport.HostPort(u))
		if err := px.Start(); err != nil {
			p.Stop()
			return nil, fmt.Errorf("%s: proxy: %w", dep, err)
		}
		p.proxies[dep] = px
		pu := *u
		pu.Host = px.Listen
		p.URLs[dep] = pu.String()
	}
	if err := p.Set(faults); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// check validates faults against the dependencies of upstreams.
func check[V any](upstreams map[string]V, faults []Fault) error {
	for _, f := range faults {
		if err := f.Validate(); err != nil {
			return err
		}
		if _, ok := upstreams[f.Dependency]; !ok {
			return fmt.Errorf("a fault for %q, which is not a dependency here", f.Dependency)
		}
	}
	return nil
}

// Set replaces the faults in force with faults, on the running proxies:
// connections open now keep their links, and the new toxics apply to the
// data that passes from now on (an experiment's phase boundary).
func (p *Proxies) Set(faults []Fault) error {
	if err := check(p.proxies, faults); err != nil {
		return err
	}
	for _, dep := range slices.Sorted(maps.Keys(p.proxies)) {
		px := p.proxies[dep]
		px.Toxics.ResetToxics(context.Background())
		for i, f := range faults {
			if f.Dependency != dep {
				continue
			}
			b, err := f.toxic(i)
			if err == nil {
				_, err = px.Toxics.AddToxicJson(bytes.NewReader(b))
			}
			if err != nil {
				return fmt.Errorf("%s: fault %d (%s): %w", dep, i, f.Kind, err)
			}
		}
	}
	p.Faults = slices.Clone(faults)
	return nil
}

// Stop stops every proxy.
func (p *Proxies) Stop() {
	for _, px := range p.proxies {
		px.Stop()
	}
}
