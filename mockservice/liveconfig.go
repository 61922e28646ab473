package mockservice

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// LiveStation is a station's live settings, as GET and PATCH
// /admin/config show them: durations as Go strings ("120ms").
type LiveStation struct {
	Workers      int `json:"workers"`
	Queue        int `json:"queue"`
	RejectStatus int `json:"reject_status"`
	// Service is the service-time distribution with durations as text.
	Service map[string]any `json:"service"`
}

// configPatch is a PATCH /admin/config body: any subset of the stations'
// live settings. service is merged field by field over the station's
// current service-time distribution.
type configPatch struct {
	Enrichment *stationPatch `yaml:"enrichment"`
	Records    *stationPatch `yaml:"records"`
}

type stationPatch struct {
	Workers      *int      `yaml:"workers"`
	Queue        *int      `yaml:"queue"`
	RejectStatus *int      `yaml:"reject_status"`
	Service      yaml.Node `yaml:"service"`
}

// maxPatchBytes bounds a PATCH body.
const maxPatchBytes = 64 << 10

// Live returns both stations' live settings.
func (s *Service) Live() map[string]LiveStation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]LiveStation{}
	for name, st := range map[string]*Station{api.Enrichment: s.enrichment, api.Records: s.records} {
		sh := st.Shape()
		spec := s.live[name]
		out[name] = LiveStation{Workers: sh.Workers, Queue: sh.Queue, RejectStatus: sh.RejectStatus, Service: specText(spec)}
	}
	return out
}

// specText is a spec as a map with durations as strings, for JSON.
func specText(spec latency.Spec) map[string]any {
	b, _ := yaml.Marshal(spec)
	var m map[string]any
	_ = yaml.Unmarshal(b, &m)
	return m
}

// Patch applies a partial update of the live settings, validated in full
// before anything changes; an error names the field. A service patch
// replaces the station's current distribution (until the next profile
// switch, which restores the profile's).
func (s *Service) Patch(body []byte) error {
	var p configPatch
	dec := yaml.NewDecoder(bytes.NewReader(body))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("body: %v", err)
	}
	type change struct {
		st    *Station
		shape Shape
		spec  latency.Spec
		dist  latency.Distribution
		name  string
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var changes []change
	for _, c := range []struct {
		name  string
		st    *Station
		patch *stationPatch
	}{{api.Enrichment, s.enrichment, p.Enrichment}, {api.Records, s.records, p.Records}} {
		if c.patch == nil {
			continue
		}
		ch := change{st: c.st, shape: c.st.Shape(), spec: s.live[c.name], name: c.name}
		if c.patch.Workers != nil {
			ch.shape.Workers = *c.patch.Workers
		}
		if c.patch.Queue != nil {
			ch.shape.Queue = *c.patch.Queue
		}
		if c.patch.RejectStatus != nil {
			ch.shape.RejectStatus = *c.patch.RejectStatus
		}
		cfg := s.cfg.Records
		if c.name == api.Enrichment {
			cfg = s.cfg.Enrichment
		}
		cfg.Workers, cfg.Queue, cfg.RejectStatus = ch.shape.Workers, ch.shape.Queue, ch.shape.RejectStatus
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("%s.%w", c.name, err)
		}
		if c.patch.Service.Kind != 0 {
			b, err := yaml.Marshal(&c.patch.Service)
			if err == nil {
				d := yaml.NewDecoder(bytes.NewReader(b))
				d.KnownFields(true)
				err = d.Decode(&ch.spec)
			}
			if err != nil {
				return fmt.Errorf("%s.service: %v", c.name, err)
			}
			if ch.dist, err = ch.spec.Build(); err != nil {
				return fmt.Errorf("%s.service.%w", c.name, err)
			}
		}
		changes = append(changes, ch)
	}
	for _, ch := range changes {
		if err := ch.st.SetShape(ch.shape); err != nil { // validated above
			return err
		}
		if ch.dist != nil {
			ch.st.SetDistribution(ch.dist)
			s.live[ch.name] = ch.spec
		}
	}
	return nil
}

// handleConfig answers GET and PATCH /admin/config: the live settings, after
// the patch for PATCH (400 naming the field of a bad one; nothing changes).
func (s *Service) handleConfig(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPatch {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPatchBytes))
		if err != nil {
			writeError(w, http.StatusRequestEntityTooLarge, "body: "+err.Error())
			return
		}
		if err := s.Patch(body); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, s.Live())
}
