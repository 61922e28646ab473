package mockservice

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/loadlab/loadlab/mockservice/api"
)

// Handler returns the service's routes.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+api.PathEnrich, s.handleEnrich)
	mux.HandleFunc("POST "+api.PathRecords, s.handleRecords)
	mux.HandleFunc("OPTIONS "+api.PathEnrich, s.handleIdentify)
	mux.HandleFunc("OPTIONS "+api.PathRecords, s.handleIdentify)
	mux.HandleFunc("GET "+api.PathHealthz, func(w http.ResponseWriter, r *http.Request) {
		s.identify(w)
		writeJSON(w, http.StatusOK, api.Health{Status: "ok", Service: api.ServiceName,
			Version: Version(), TimeScale: s.cfg.TimeScale})
	})
	mux.Handle("GET "+api.PathMetrics, promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{Registry: s.registry}))
	mux.Handle("GET "+api.PathAdminProfile, s.admin(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		p := s.profile
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"profile": p, "profiles": s.cfg.ProfileNames()})
	}))
	mux.Handle("PUT "+api.PathAdminProfile, s.admin(s.handleSetProfile))
	mux.Handle("POST "+api.PathAdminReset, s.admin(s.handleReset))
	mux.Handle("GET "+api.PathAdminConfig, s.admin(s.handleConfig))
	mux.Handle("PATCH "+api.PathAdminConfig, s.admin(s.handleConfig))
	mux.Handle("GET "+api.PathRecord, s.admin(s.handleRecord))
	mux.Handle("GET "+api.PathAdminStats, s.admin(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Stats())
	}))
	mux.Handle("GET "+api.PathAdminRequests, s.admin(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.log.Snapshot())
	}))
	return mux
}

// through reads and checks a request's body into req, then passes it
// through station st. It returns the function that closes the request at
// the station, and whether it was served; when it was not, it has
// answered. The body is read and checked before the request counts as
// offered at the station (Station.Open): a client still sending its body
// holds no worker and offers nothing yet, and a request refused for bad
// input (4xx) never reaches the station.
func through(w http.ResponseWriter, r *http.Request, st *Station, req interface{ Check() error }, replay time.Duration, admitted func()) (leave func(), served bool) {
	leave = func() {}
	if !validRequestID(w, r) || !decode(w, r, req) {
		if admitted != nil {
			admitted() // refused: the next in issue order need not wait for it
		}
		return leave, false
	}
	if err := req.Check(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		if admitted != nil {
			admitted()
		}
		return leave, false
	}
	leave = st.Open()
	res := st.DoFor(r.Context(), r.Header.Get(api.HeaderRequestID), replay, admitted)
	return leave, !answeredUnserved(w, res)
}

func (s *Service) handleEnrich(w http.ResponseWriter, r *http.Request) {
	replay, ok := s.replayOf(w, r)
	if !ok {
		return
	}
	admitted, ok := s.inOrder(w, r)
	if !ok {
		return
	}
	var req api.EnrichRequest
	leave, served := through(w, r, s.enrichment, &req, replay, admitted)
	defer leave()
	if !served {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"record_id": req.RecordID, "step": req.Step,
		"value": fmt.Sprintf("enriched:%s:%d", req.RecordID, req.Step)})
}

func (s *Service) handleRecords(w http.ResponseWriter, r *http.Request) {
	var req api.WriteRequest
	leave, served := through(w, r, s.records, &req, -1, nil)
	defer leave()
	if !served {
		return
	}
	isNew, err := s.store(req.ID, *req.Complete)
	switch {
	case err != nil: // not durable, so not acknowledged
		writeError(w, http.StatusInternalServerError, "the write was not stored: "+err.Error())
		return
	case isNew:
		writeJSON(w, http.StatusCreated, map[string]any{"id": req.ID, "stored": true})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": req.ID, "stored": false, "duplicate": true})
}

// replayOf reads api.HeaderReplay: the service time to replay, or -1 when
// the request has none. In a service not started in replay mode, or with
// a value that is not a number of milliseconds in [0, api.MaxReplay], it
// answers 400 and reports false.
func (s *Service) replayOf(w http.ResponseWriter, r *http.Request) (time.Duration, bool) {
	v := r.Header.Get(api.HeaderReplay)
	if v == "" {
		return -1, true
	}
	if !s.cfg.Replay {
		writeError(w, http.StatusBadRequest, api.HeaderReplay+": this mock service is not in replay mode")
		return 0, false
	}
	ms, err := strconv.ParseFloat(v, 64)
	// Bounded before the conversion: a huge value would overflow.
	if err != nil || !(ms >= 0) || ms > float64(api.MaxReplay/time.Millisecond) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s: %q is not a number of milliseconds in [0, %v]", api.HeaderReplay, v, api.MaxReplay))
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

// inOrder reads api.HeaderReplaySeq (replay mode only): the request waits,
// at most replaySeqWait, until every request of a lower number since the
// last reset has been admitted, and the returned func, called at its own
// admission, lets the next one in. Requests a client sends at once over
// several connections then reach the station in the order it issued them,
// as the model has it. Without the header: nil, no wait.
func (s *Service) inOrder(w http.ResponseWriter, r *http.Request) (admitted func(), ok bool) {
	v := r.Header.Get(api.HeaderReplaySeq)
	if v == "" {
		return nil, true
	}
	n, err := strconv.Atoi(v)
	if !s.cfg.Replay || err != nil || n < 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s: %q: a number ≥ 0, in replay mode only", api.HeaderReplaySeq, v))
		return nil, false
	}
	epoch := s.seq.await(r.Context(), n, replaySeqWait)
	return func() { s.seq.done(epoch, n) }, true
}

// replaySeqWait bounds the wait for a lower-numbered request that may never
// come (its client gave up, say): past it the request goes in anyway.
const replaySeqWait = 100 * time.Millisecond

// handleIdentify answers OPTIONS on a load route: 204, the methods the
// route allows, and the service's identity (identify). It never reaches the
// station: it is not offered concurrency, not counted and not logged, so a
// client may ask before a run without changing the run's figures.
func (s *Service) handleIdentify(w http.ResponseWriter, r *http.Request) {
	s.identify(w)
	w.Header().Set("Allow", http.MethodPost+", "+http.MethodOptions)
	w.WriteHeader(http.StatusNoContent)
}

// identify sets the headers by which a client knows a loadlab mock service:
// api.HeaderMock ("loadlab-mock/<version>") and api.HeaderTimeScale, written
// so that strconv.ParseFloat reads back exactly the configured scale.
func (s *Service) identify(w http.ResponseWriter) {
	h := w.Header()
	h.Set(api.HeaderMock, api.ServiceName+"/"+Version())
	h.Set(api.HeaderTimeScale, strconv.FormatFloat(s.cfg.TimeScale, 'g', -1, 64))
}

func validRequestID(w http.ResponseWriter, r *http.Request) bool {
	if len(r.Header.Get(api.HeaderRequestID)) > api.MaxRequestIDBytes {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s: longer than %d bytes", api.HeaderRequestID, api.MaxRequestIDBytes))
		return false
	}
	return true
}

// answeredUnserved sets the timing headers and, for a request that was not
// served (refused, or cancelled because its client left), writes the
// answer; it reports whether it did, so that the caller answers only served
// requests.
func answeredUnserved(w http.ResponseWriter, res Result) bool {
	h := w.Header()
	// Assigned, not Set: the names are canonical already (a test holds
	// them to it), and this runs on every request.
	h[api.HeaderQueueWait] = []string{millis(res.QueueWait)}
	h[api.HeaderService] = []string{millis(res.Service)}
	switch res.Outcome {
	case api.OutcomeRejected:
		w.Header().Set("Retry-After", "1")
		writeError(w, res.RejectStatus, "queue full")
		return true
	case api.OutcomeCancelled:
		// The client is gone; this answer is for the log, if anyone.
		writeError(w, api.StatusClientLeft, "cancelled: client left")
		return true
	}
	return false
}

// millis writes d in milliseconds with three decimals, rounded to the
// nearest microsecond: "12.345".
func millis(d time.Duration) string {
	us := (d + 500*time.Nanosecond) / time.Microsecond
	if us < 0 {
		us = 0
	}
	var b [24]byte
	out := strconv.AppendInt(b[:0], int64(us/1000), 10)
	frac := us % 1000
	return string(append(out, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10)))
}

// handleReset resets the service; an optional body {"seed": N} re-seeds
// the stations with N (the system of record with api.RecordsSeed(N)).
func (s *Service) handleReset(w http.ResponseWriter, r *http.Request) {
	var req api.ResetRequest
	if r.ContentLength != 0 && !decode(w, r, &req) {
		return
	}
	seed := s.cfg.Seed
	if req.Seed != nil {
		seed = *req.Seed
	}
	if err := s.ResetSeed(seed); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reset": true, "seed": seed})
}

// handleRecord answers whether the system of record stored a write of the
// id since the last reset: 200 with the record, or 404.
func (s *Service) handleRecord(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	complete, ok := s.Stored(id)
	if !ok {
		writeError(w, http.StatusNotFound, "no record "+strconv.Quote(id)+" stored since the last reset")
		return
	}
	writeJSON(w, http.StatusOK, api.StoredRecord{ID: id, Complete: complete})
}

func (s *Service) handleSetProfile(w http.ResponseWriter, r *http.Request) {
	var req api.ProfileRequest
	if !decode(w, r, &req) {
		return
	}
	if err := s.SetProfile(req.Profile); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"profile": req.Profile})
}

// admin guards a route with the bearer token, when one is configured.
func (s *Service) admin(h http.HandlerFunc) http.Handler {
	if s.cfg.AdminToken == "" {
		return h
	}
	want := []byte(api.BearerPrefix + s.cfg.AdminToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="loadlab-mock-admin"`)
			writeError(w, http.StatusUnauthorized, "admin route needs Authorization: Bearer <token>")
			return
		}
		h(w, r)
	})
}

// decode reads one JSON object of at most api.MaxBodyBytes into v, answering
// 413 or 400 itself when it cannot.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body := http.MaxBytesReader(w, r.Body, api.MaxBodyBytes)
	dec := json.NewDecoder(body)
	err := dec.Decode(v)
	if err == nil {
		// Exactly one value: trailing data is malformed input.
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			err = errors.New("unexpected data after the JSON object")
			if terr != nil {
				err = terr
			}
		}
	}
	if err == nil {
		return true
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", api.MaxBodyBytes))
		return false
	}
	writeError(w, http.StatusBadRequest, "malformed JSON: "+err.Error())
	return false
}

// WriteJSON answers status with v as JSON, as every route of the mock
// service and of its virtual copies does.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// WriteError answers status with {"error": msg}.
func WriteError(w http.ResponseWriter, status int, msg string) { writeError(w, status, msg) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
