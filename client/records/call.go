package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/mockservice/api"
)

type runner struct {
	cfg            Config
	http           *http.Client
	enrich, writes *budgets.Budget
	// What the client can reconcile with the server: calls whose request
	// was written to the wire, per route, and writes answered 201 (stored
	// new) and 200 (a duplicate).
	sentEnrich, sentWrites atomic.Int64
	created, duplicate     atomic.Int64
}

// buildBudgets returns the budgets for enrichment and writes. A shared
// strategy (C3) gives both one pool of permits, and each its own rate limit.
func buildBudgets(cfg Config, m *budgets.Metrics) (enrich, writes *budgets.Budget, err error) {
	s := cfg.Strategy
	call, permit := cfg.scaled(cfg.CallTimeout), cfg.scaled(cfg.PermitTimeout)
	var pool *budgets.Pool
	if s.SharedPermits > 0 {
		pool = budgets.NewPool(s.SharedPermits)
	}
	one := func(name string, limit int, rate float64) (*budgets.Budget, error) {
		if pool == nil && limit == budgets.NoLimit && rate == 0 {
			return budgets.Unlimited(name, call, m)
		}
		return budgets.New(name, budgets.Config{Limit: limit, Pool: pool, Rate: rate / cfg.TimeScale, Burst: 1,
			PermitTimeout: permit, CallTimeout: call}, m)
	}
	if enrich, err = one(Enrichment, s.EnrichPermits, s.EnrichRate); err != nil {
		return nil, nil, err
	}
	writes, err = one(Records, s.WritePermits, s.WriteRate)
	return enrich, writes, err
}

// process runs one record to its terminal state, and returns it with the
// record's id. Enrichment stops at the first call that does not succeed;
// the record is then written incomplete.
func (r *runner) process(ctx context.Context, i int) (State, string) {
	id := fmt.Sprintf("%s%05d", r.cfg.RunID, i)
	complete := true
	for step := 1; step <= EnrichmentSteps; step++ {
		body, _ := json.Marshal(api.EnrichRequest{RecordID: id, Step: step})
		if res := r.enrich.Do(ctx, Enrichment, r.post(api.PathEnrich, body)); res.Class != budgets.OK {
			complete = false
			break
		}
	}
	if ctx.Err() != nil { // interrupted: the write is not sent
		return Interrupted, id
	}
	body, _ := json.Marshal(api.WriteRequest{ID: id, Complete: &complete})
	res := r.writes.Do(ctx, Records, r.post(api.PathRecords, body))
	switch res.Status {
	case http.StatusCreated:
		r.created.Add(1)
	case http.StatusOK:
		r.duplicate.Add(1)
	}
	switch {
	case res.Class == budgets.OK && complete:
		return Complete, id
	case res.Class == budgets.OK:
		return Incomplete, id
	case res.Class == budgets.Rejected:
		return WriteRejected, id
	case res.Status == 0 && res.Latency > 0 && !errors.Is(res.Err, errNotSent):
		// Written, and no answer: the system of record may have stored it.
		return WriteUnknown, id
	case res.Status == 0 && ctx.Err() != nil:
		// The interruption came before the write reached the wire.
		return Interrupted, id
	default: // never sent, or answered with another status
		return Failed, id
	}
}

// errNotSent marks a call whose request never reached the wire (refused
// connection, no route): the dependency cannot have acted on it.
var errNotSent = errors.New("request not sent")

// post returns a call that POSTs body and reads the whole answer within the
// call's context. An error before the request was written wraps errNotSent.
func (r *runner) post(path string, body []byte) budgets.Call {
	return func(ctx context.Context) (int, error) {
		var wrote atomic.Bool
		sent := &r.sentEnrich
		if path == api.PathRecords {
			sent = &r.sentWrites
		}
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteRequest: func(i httptrace.WroteRequestInfo) {
				wrote.Store(true)
				if i.Err == nil { // written in full: the server can count it
					sent.Add(1)
				}
			},
		})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.cfg.Target+path, bytes.NewReader(body))
		if err != nil {
			return 0, fmt.Errorf("%w: %v", errNotSent, err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := r.http.Do(req)
		if err != nil {
			if !wrote.Load() {
				return 0, fmt.Errorf("%w: %w", errNotSent, err)
			}
			return 0, err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return 0, err
		}
		return resp.StatusCode, nil
	}
}
