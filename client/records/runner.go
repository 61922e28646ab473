package records

import (
	"errors"
	"fmt"
	"net/http"
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

// errNotSent marks a call whose request never reached the wire (refused
// connection, no route): the dependency cannot have acted on it.
var errNotSent = errors.New("request not sent")
