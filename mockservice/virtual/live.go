package virtual

import (
	"io"
	"net/http"
	"reflect"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/config"
)

// maxPatchBytes bounds a PATCH body, as the lab's service does.
const maxPatchBytes = 64 << 10

// LiveCopy is a copy's live settings, as GET and PATCH /admin/config show
// them under its name: its station's as the lab's stations' (durations as
// text), and its token bucket's, when it has one.
type LiveCopy struct {
	mockservice.LiveStation
	Rate *LiveRate `json:"rate,omitempty"`
}

// LiveRate is a token bucket's live settings; PerSecond and Burst may be
// patched.
type LiveRate struct {
	PerSecond float64 `json:"per_second"`
	Burst     int     `json:"burst"`
	Status    int     `json:"status"`
	// RetryAfter is the refusal's Retry-After as text ("1s"); "0s": none.
	RetryAfter string `json:"retry_after"`
}

// Live returns the copy's live settings, keyed by its name.
func (c *Copy) Live() map[string]LiveCopy {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := LiveCopy{LiveStation: mockservice.NewLiveStation(c.station.Shape(), c.live.Service)}
	if r := c.live.Rate; r != nil {
		out.Rate = &LiveRate{PerSecond: r.PerSecond, Burst: r.Burst, Status: r.Status, RetryAfter: r.RetryAfter.String()}
	}
	return map[string]LiveCopy{c.cfg.Name: out}
}

// Patch applies a partial update of the live settings
// (config.ApplyVirtualPatch: under the copy's name, any of workers,
// queue, reject_status, service and the rate's per_second and burst),
// validated in full before anything changes; an error names the field.
// A new rate or burst applies from now on to the tokens the bucket holds
// now.
func (c *Copy) Patch(body []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.live
	sh := c.station.Shape()
	cur.Station.Workers, cur.Station.Queue, cur.Station.RejectStatus = sh.Workers, sh.Queue, sh.RejectStatus
	next, err := config.ApplyVirtualPatch(body, c.cfg.Name, cur)
	if err != nil {
		return err
	}
	if err := c.station.SetShape(mockservice.Shape{Workers: next.Station.Workers, Queue: next.Station.Queue, RejectStatus: next.Station.RejectStatus}); err != nil {
		return err // validated above
	}
	if !reflect.DeepEqual(next.Service, cur.Service) {
		dist, err := next.Service.Build()
		if err != nil {
			return err // validated above
		}
		c.station.SetDistribution(dist)
	}
	if next.Rate != nil && *next.Rate != *cur.Rate {
		c.limiter.SetLimit(c.realRate(next.Rate.PerSecond))
		c.limiter.SetBurst(next.Rate.Burst)
	}
	c.live = next
	return nil
}

// handleConfig answers GET and PATCH /admin/config: the live settings,
// after the patch for PATCH (400 naming the field of a bad one; nothing
// changes).
func (c *Copy) handleConfig(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPatch {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPatchBytes))
		if err != nil {
			writeError(w, http.StatusRequestEntityTooLarge, "body: "+err.Error())
			return
		}
		if err := c.Patch(body); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, c.Live())
}
