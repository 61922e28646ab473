package records

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/pipeline"
)

type runner struct {
	cfg      Config
	pipeline *pipeline.Pipeline
	http     *http.Client
	// Per dependency, by name: its budget, and what the client can
	// reconcile with the server: calls whose request was written to the
	// wire.
	budgets map[string]*budgets.Budget
	sent    map[string]*atomic.Int64
	// adaptive is each adaptive limit the run gave a dependency, by name.
	adaptive map[string]*budgets.Adaptive
	// retry makes each call's attempts and counts them.
	retry *retrier
	// The write's (the last step's dependency's) answers 201 (stored new)
	// and 200 (a duplicate).
	created, duplicate atomic.Int64
	// kinds counts the calls that ended in an error, by dependency and
	// kind.
	kindsMu sync.Mutex
	kinds   map[ErrorKey]int
	// tally counts the run's records, and its events in time.
	tally *tally
}

// limits is each adaptive limit now, by dependency (nil: none).
func (r *runner) limits() map[string]int {
	if len(r.adaptive) == 0 {
		return nil
	}
	out := make(map[string]int, len(r.adaptive))
	for dep, ad := range r.adaptive {
		out[dep] = ad.Limit()
	}
	return out
}

// countError records a call that ended in an error under its kind.
func (r *runner) countError(dep string, res budgets.Result) {
	if kind, ok := kindOf(res); ok {
		r.countKind(dep, kind)
	}
}

// countKind counts one call that ended in an error of the given kind.
func (r *runner) countKind(dep string, kind ErrorKind) {
	r.kindsMu.Lock()
	defer r.kindsMu.Unlock()
	if r.kinds == nil {
		r.kinds = map[ErrorKey]int{}
	}
	r.kinds[ErrorKey{Dependency: dep, Kind: kind}]++
}

// buildBudgets returns a budget per dependency of the pipeline, and the
// adaptive limits it gave dependencies. A shared strategy (C3) gives them
// all one pool of permits, and each its own rate limit; a dependency's own
// permits (C4) or adaptive limit (C5) is its budget's limiter. Each budget
// judges answers by its dependency's statuses.
func buildBudgets(cfg Config, p *pipeline.Pipeline, m *budgets.Metrics) (map[string]*budgets.Budget, map[string]*budgets.Adaptive, error) {
	s := cfg.Strategy
	var shared budgets.Limiter // nil: no limiter
	if s.SharedPermits > 0 {
		shared = budgets.NewPool(s.SharedPermits)
	}
	out := map[string]*budgets.Budget{}
	var adaptive map[string]*budgets.Adaptive
	for _, d := range p.Dependencies {
		limiter := shared
		if n := s.PermitsFor(d.Name); n > 0 {
			limiter = budgets.Fixed(n)
		}
		if spec, ok := s.Adaptive[d.Name]; ok {
			ad, err := newAdaptive(spec)
			if err != nil {
				return nil, nil, fmt.Errorf("adaptive.%s: %w", d.Name, err)
			}
			if adaptive == nil {
				adaptive = map[string]*budgets.Adaptive{}
			}
			limiter, adaptive[d.Name] = ad, ad
		}
		b, err := budgets.New(d.Name, budgets.Config{Limiter: limiter, Rate: s.RateFor(d.Name) / cfg.TimeScale, Burst: 1,
			PermitTimeout: cfg.scaled(cfg.PermitTimeout), CallTimeout: cfg.scaled(cfg.CallTimeout),
			Success: d.Success, Rejection: d.Rejection}, m)
		if err != nil {
			return nil, nil, err
		}
		out[d.Name] = b
	}
	return out, adaptive, nil
}

// process runs one record to its terminal state, and returns it with the
// record's id: the pipeline's steps in order (package pipeline says how a
// failed call ends its step, and the record when the step is required).
func (r *runner) process(ctx context.Context, i int) (State, string) {
	id := fmt.Sprintf("%s%05d", r.cfg.RunID, i)
	write := len(r.pipeline.Steps) - 1
	complete := true
	for si, step := range r.pipeline.Steps {
		dep := r.pipeline.Dependency(step.Dependency)
		for n := 1; n <= step.Repeat; n++ {
			if step.Required && ctx.Err() != nil { // interrupted: the required call is not sent
				return Interrupted, id
			}
			data := pipeline.Data{ID: id, Index: i, Step: n, Complete: complete}
			path, body, err := dep.Render(data)
			var headers map[string]string
			if err == nil {
				headers, err = dep.RenderHeaders(data)
			}
			if err != nil { // the templates rendered at load; an id can still break one
				r.countKind(dep.Name, TemplateKind(err))
				return Failed, id
			}
			call := r.call(dep, path, body, headers)
			isWrite := dep.Name == r.pipeline.Write()
			if isWrite {
				call = r.tally.countWrites(call)
			}
			res, earlierUnanswered := r.retry.do(ctx, r.budgets[dep.Name], dep.Name, isWrite, call, func(res budgets.Result) {
				if isWrite && res.Class == budgets.Rejected {
					r.tally.writeRejected()
				}
			})
			if si == write {
				switch res.Status {
				case http.StatusCreated:
					r.created.Add(1)
				case http.StatusOK:
					r.duplicate.Add(1)
				}
			}
			if res.Class == budgets.OK {
				continue
			}
			if res.Class == budgets.Error {
				r.countError(dep.Name, res)
			}
			if !step.Required {
				complete = false
				break
			}
			switch {
			case earlierUnanswered && si == write:
				// An earlier attempt was written without an answer: the
				// system of record may hold it whatever the last said.
				return WriteUnknown, id
			case res.Class == budgets.Rejected && si == write:
				return WriteRejected, id
			case res.Class == budgets.Rejected:
				return StepRejected, id
			case res.Status == 0 && res.Latency > 0 && !errors.Is(res.Err, errNotSent) && si == write:
				// Written, and no answer: the system of record may have
				// stored it. (Before the write, no answer means the record
				// was never written: it failed.)
				return WriteUnknown, id
			case res.Status == 0 && ctx.Err() != nil:
				// The interruption came before the call reached the wire.
				return Interrupted, id
			default: // never sent, or answered with another status
				return Failed, id
			}
		}
		if ctx.Err() != nil && si < write { // interrupted: nothing more is sent
			return Interrupted, id
		}
	}
	if complete {
		return Complete, id
	}
	return Incomplete, id
}

// errNotSent marks a call whose request never reached the wire (refused
// connection, no route): the dependency cannot have acted on it.
var errNotSent = errors.New("request not sent")

// call returns a call to dep at path with body that reads the whole answer
// within the call's context. An error before the request was written wraps
// errNotSent.
func (r *runner) call(dep *pipeline.Dependency, path string, body []byte, headers map[string]string) budgets.Call {
	base := r.cfg.callBase(*dep)
	sent := r.sent[dep.Name]
	return func(ctx context.Context) (int, error) {
		var wrote atomic.Bool
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteRequest: func(i httptrace.WroteRequestInfo) {
				wrote.Store(true)
				if i.Err == nil { // written in full: the server can count it
					sent.Add(1)
				}
			},
		})
		var rd io.Reader
		if len(body) > 0 {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, dep.Method, base+path, rd)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", errNotSent, err)
		}
		if len(body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
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
