package virtual

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/api"
)

// maxBodyBytes bounds a request body the copy reads (and discards) before
// the request reaches its token bucket: 413 beyond, counted nowhere.
const maxBodyBytes = 8 << 20

// Handler returns the copy's routes: its method on its paths (OPTIONS on
// them identifies it), GET /healthz, GET /metrics, and the admin routes
// GET /admin/stats, POST /admin/reset, GET and PATCH /admin/config, behind
// the admin token when one is set. Anything else is 404, counted nowhere.
func (c *Copy) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+api.PathHealthz, func(w http.ResponseWriter, r *http.Request) {
		c.identify(w)
		writeJSON(w, http.StatusOK, api.Health{Status: "ok", Service: api.ServiceName, Version: mockservice.Version(), TimeScale: c.scale})
	})
	mux.Handle("GET "+api.PathMetrics, promhttp.HandlerFor(c.registry, promhttp.HandlerOpts{Registry: c.registry}))
	mux.Handle("GET "+api.PathAdminStats, c.admin(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, c.Stats())
	}))
	mux.Handle("POST "+api.PathAdminReset, c.admin(c.handleReset))
	mux.Handle("GET "+api.PathAdminConfig, c.admin(c.handleConfig))
	mux.Handle("PATCH "+api.PathAdminConfig, c.admin(c.handleConfig))
	mux.HandleFunc("/", c.route)
	return mux
}

// route answers the copy's method on its paths, and OPTIONS on them;
// anything else is 404.
func (c *Copy) route(w http.ResponseWriter, r *http.Request) {
	switch {
	case !c.answers(r.URL.Path):
	case r.Method == c.cfg.Method:
		c.serve(w, r)
		return
	case r.Method == http.MethodOptions:
		c.identify(w)
		w.Header().Set("Allow", c.cfg.Method+", "+http.MethodOptions)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s: this copy (%s) answers %s on %s", r.Method, r.URL.Path,
		c.cfg.Name, c.cfg.Method, strings.Join(c.cfg.Paths, ", ")))
}

// answers says whether path is one of the copy's: one of its paths, or
// below one that ends in /*.
func (c *Copy) answers(path string) bool {
	if c.paths[path] {
		return true
	}
	for p := range c.paths {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// serve passes one request through the token bucket, then the station:
// the body is read first (a client still sending it offers nothing yet),
// a request without a token is refused at once and never reaches the
// station, and one the station serves is answered the OK status with {}.
func (c *Copy) serve(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, maxBodyBytes)); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", maxBodyBytes))
			return
		}
		writeError(w, http.StatusBadRequest, "body: "+err.Error())
		return
	}
	if status, after, ok := c.takeToken(); !ok {
		refuse(w, status, after, "rate limited")
		return
	}
	leave := c.station.Open()
	defer leave()
	res := c.station.DoFor(r.Context(), "", -1, nil)
	h := w.Header()
	h[api.HeaderQueueWait] = []string{millis(res.QueueWait)}
	h[api.HeaderService] = []string{millis(res.Service)}
	switch res.Outcome {
	case api.OutcomeRejected:
		refuse(w, res.RejectStatus, retryAfterSeconds(c.cfg.RetryAfter), "queue full")
	case api.OutcomeCancelled:
		writeError(w, api.StatusClientLeft, "cancelled: client left")
	default:
		h.Set("Content-Type", "application/json")
		w.WriteHeader(c.cfg.OKStatus)
		if c.cfg.OKStatus != http.StatusNoContent {
			_, _ = io.WriteString(w, "{}")
		}
	}
}

// refuse answers a refusal: status, Retry-After when given, the reason.
func refuse(w http.ResponseWriter, status int, retryAfter, reason string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeError(w, status, reason)
}

// retryAfterSeconds is a Retry-After header's value for d: whole seconds,
// rounded up; "" for 0 (no header).
func retryAfterSeconds(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// millis writes d in milliseconds with three decimals: "12.345".
func millis(d time.Duration) string {
	return strconv.FormatFloat(float64(max(d, 0).Round(time.Microsecond))/float64(time.Millisecond), 'f', 3, 64)
}

// identify sets the headers by which a client knows a loadlab mock
// service, as the lab's service does: api.HeaderMock and the time scale.
func (c *Copy) identify(w http.ResponseWriter) {
	h := w.Header()
	h.Set(api.HeaderMock, api.ServiceName+"/"+mockservice.Version())
	h.Set(api.HeaderTimeScale, strconv.FormatFloat(c.scale, 'g', -1, 64))
}

// handleReset resets the copy; an optional body {"seed": N} re-seeds it
// with N (the station with api.CopySeed(N, name)).
func (c *Copy) handleReset(w http.ResponseWriter, r *http.Request) {
	var req api.ResetRequest
	if r.ContentLength != 0 {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, api.MaxBodyBytes))
		if err == nil && len(body) > 0 {
			err = json.Unmarshal(body, &req)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, "malformed JSON: "+err.Error())
			return
		}
	}
	seed := c.seed
	if req.Seed != nil {
		seed = *req.Seed
	}
	c.Reset(seed)
	writeJSON(w, http.StatusOK, map[string]any{"reset": true, "seed": seed})
}

// admin guards a route with the bearer token, when one is configured.
func (c *Copy) admin(h http.HandlerFunc) http.Handler {
	if c.token == "" {
		return h
	}
	want := []byte(api.BearerPrefix + c.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="loadlab-mock-admin"`)
			writeError(w, http.StatusUnauthorized, "admin route needs Authorization: Bearer <token>")
			return
		}
		h(w, r)
	})
}

// writeJSON and writeError answer as the lab's mock service does.
var (
	writeJSON  = mockservice.WriteJSON
	writeError = mockservice.WriteError
)
