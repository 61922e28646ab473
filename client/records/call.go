package records

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/mockservice/api"
)

type runner struct {
	cfg            Config
	http           *http.Client
	enrich, writes *budgets.Budget
}

// buildBudgets returns the budgets for enrichment and writes; for a shared
// strategy they are the same budget.
func buildBudgets(cfg Config, m *budgets.Metrics) (enrich, writes *budgets.Budget, err error) {
	s := cfg.Strategy
	call, permit := cfg.scaled(cfg.CallTimeout), cfg.scaled(cfg.PermitTimeout)
	one := func(name string, limit int, rate float64) (*budgets.Budget, error) {
		if limit == budgets.NoLimit && rate == 0 {
			return budgets.Unlimited(name, call, m)
		}
		return budgets.New(name, budgets.Config{Limit: limit, Rate: rate / cfg.TimeScale, Burst: 1,
			PermitTimeout: permit, CallTimeout: call}, m)
	}
	if s.SharedPermits > 0 {
		shared, err := budgets.New("shared", budgets.Config{Limit: s.SharedPermits, PermitTimeout: permit, CallTimeout: call}, m)
		return shared, shared, err
	}
	if enrich, err = one(Enrichment, s.EnrichPermits, s.EnrichRate); err != nil {
		return nil, nil, err
	}
	writes, err = one(Records, s.WritePermits, s.WriteRate)
	return enrich, writes, err
}

// process runs one record to its terminal state. Enrichment stops at the
// first call that does not succeed; the record is then written incomplete.
func (r *runner) process(ctx context.Context, i int) State {
	id := fmt.Sprintf("%s%05d", r.cfg.RunID, i)
	complete := true
	for step := 1; step <= EnrichmentSteps; step++ {
		body, _ := json.Marshal(api.EnrichRequest{RecordID: id, Step: step})
		if res := r.enrich.Do(ctx, Enrichment, r.post(api.PathEnrich, body)); res.Class != budgets.OK {
			complete = false
			break
		}
	}
	body, _ := json.Marshal(api.WriteRequest{ID: id, Complete: &complete})
	res := r.writes.Do(ctx, Records, r.post(api.PathRecords, body))
	switch {
	case res.Class == budgets.OK && complete:
		return Complete
	case res.Class == budgets.OK:
		return Incomplete
	case res.Class == budgets.Rejected:
		return WriteRejected
	default:
		return Failed
	}
}

// post returns a call that POSTs body and reads the whole answer within the
// call's context.
func (r *runner) post(path string, body []byte) budgets.Call {
	return func(ctx context.Context) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.cfg.Target+path, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := r.http.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return 0, err
		}
		return resp.StatusCode, nil
	}
}
