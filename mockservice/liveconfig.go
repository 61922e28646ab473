package mockservice

import (
	"io"
	"net/http"
	"reflect"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
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

// maxPatchBytes bounds a PATCH body.
const maxPatchBytes = 64 << 10

// Live returns both stations' live settings.
func (s *Service) Live() map[string]LiveStation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]LiveStation{}
	for name, st := range map[string]*Station{api.Enrichment: s.enrichment, api.Records: s.records} {
		out[name] = NewLiveStation(st.Shape(), s.live[name])
	}
	return out
}

// NewLiveStation is a station's live settings as GET /admin/config shows
// them, from its shape and its service time's spec.
func NewLiveStation(sh Shape, spec latency.Spec) LiveStation {
	return LiveStation{Workers: sh.Workers, Queue: sh.Queue, RejectStatus: sh.RejectStatus, Service: specText(spec)}
}

// specText is a spec as a map with durations as strings, for JSON.
func specText(spec latency.Spec) map[string]any {
	b, _ := yaml.Marshal(spec)
	var m map[string]any
	_ = yaml.Unmarshal(b, &m)
	return m
}

// Patch applies a partial update of the live settings (config.ApplyPatch),
// validated in full before anything changes; an error names the field. A
// service patch replaces the station's current distribution (until the
// next profile switch, which restores the profile's).
func (s *Service) Patch(body []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	stations := map[string]*Station{api.Enrichment: s.enrichment, api.Records: s.records}
	live := map[string]config.Live{}
	for name, st := range stations {
		cfg := s.cfg.Records
		if name == api.Enrichment {
			cfg = s.cfg.Enrichment
		}
		sh := st.Shape()
		cfg.Workers, cfg.Queue, cfg.RejectStatus = sh.Workers, sh.Queue, sh.RejectStatus
		live[name] = config.Live{Station: cfg, Service: s.live[name]}
	}
	next, changed, err := config.ApplyPatch(body, live)
	if err != nil {
		return err
	}
	for _, name := range changed {
		l := next[name]
		if err := stations[name].SetShape(Shape{Workers: l.Station.Workers, Queue: l.Station.Queue, RejectStatus: l.Station.RejectStatus}); err != nil {
			return err // validated above
		}
		if !reflect.DeepEqual(l.Service, s.live[name]) {
			dist, err := l.Service.Build()
			if err != nil {
				return err // validated above
			}
			stations[name].SetDistribution(dist)
			s.live[name] = l.Service
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
