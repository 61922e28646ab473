package strategy

import (
	"maps"
	"slices"
	"time"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/mockservice/field"
)

// Overrides change a strategy for one run, key by key (loadlab run's
// flags); a nil field leaves the strategy's as it is.
type Overrides struct {
	RecordsInFlight *int
	SharedPermits   *int
	// Permits and Rates set dependencies' permits and calls per lab second
	// by the pipeline's names (0 removes one).
	Permits map[string]int
	Rates   map[string]float64
	// Adaptive gives dependencies an adaptive limit in place of their
	// permits; a nil limit removes the dependency's.
	Adaptive map[string]*AdaptiveLimit
	// Retries changes the strategy's retries (nil: unchanged).
	Retries *RetryOverrides
}

// RetryOverrides change a strategy's retries; a strategy without retries
// starts from the lab's policy with no budget.
type RetryOverrides struct {
	// Attempts per call, the first included.
	Attempts *int
	// BaseBackoff and MaxBackoff bound the full-jitter backoff (lab).
	BaseBackoff, MaxBackoff *time.Duration
	// Budget replaces the retry budget; NoBudget removes it.
	Budget   *budgets.RetryBudgetConfig
	NoBudget bool
}

// With is the strategy with o applied, for a run of pipeline p: its
// budgets in Permits and Rates (Normalized), a dependency given an
// adaptive limit without permits. An error is a *field.Error naming the
// override's field within the strategy ("strategy.permits.records",
// "strategy.adaptive.records", "strategy.retries", …); the whole strategy
// is validated with the run's Config, which checks that its budgets name
// p's dependencies (Fits).
func (s Strategy) With(o Overrides, p *pipeline.Pipeline) (Strategy, error) {
	s, err := s.with(o)
	return s, field.Within("strategy", err)
}

func (s Strategy) with(o Overrides) (Strategy, error) {
	s = s.Normalized()
	if o.RecordsInFlight != nil {
		s.RecordsInFlight = *o.RecordsInFlight
	}
	if o.SharedPermits != nil {
		s.SharedPermits = *o.SharedPermits
	}
	given := map[string]string{} // dependencies given permits, by the field that gave them
	for _, dep := range slices.Sorted(maps.Keys(o.Permits)) {
		if err := s.setPermits("permits."+dep, dep, o.Permits[dep]); err != nil {
			return s, err
		}
		if o.Permits[dep] > 0 {
			given[dep] = "permits." + dep
		}
	}
	for dep, r := range o.Rates {
		s.setRate(dep, r)
	}
	for _, dep := range slices.Sorted(maps.Keys(o.Adaptive)) {
		if a := o.Adaptive[dep]; a == nil {
			delete(s.Adaptive, dep)
		} else {
			if err := a.Validate(); err != nil {
				return s, field.Within("adaptive."+dep, err)
			}
			s.Adaptive = maps.Clone(s.Adaptive)
			if s.Adaptive == nil {
				s.Adaptive = map[string]AdaptiveLimit{}
			}
			s.Adaptive[dep] = *a
			delete(s.Permits, dep)
		}
	}
	if o.Retries != nil {
		s.Retries = o.Retries.apply(s.Retries)
		if err := s.Retries.Validate(); err != nil {
			return s, err
		}
	}
	return s, s.permitsFit(given)
}

// permitsFit says why permits given to dependencies by overrides (the
// fields that gave them, by dependency) cannot be the strategy's: it
// shares one budget among all calls, or gives the dependency an adaptive
// limit.
func (s Strategy) permitsFit(given map[string]string) error {
	for _, dep := range slices.Sorted(maps.Keys(given)) {
		if s.SharedPermits > 0 {
			return field.Errorf(given[dep], "strategy %s shares one budget of %d permits among all its calls: per-dependency permits need no shared budget (shared permits 0)",
				s.Name, s.SharedPermits)
		}
		if _, ok := s.Adaptive[dep]; ok {
			return field.Errorf(given[dep], "strategy %s gives %s an adaptive limit, which replaces its permits: turn the adaptive limit off for %s, or give none",
				s.Name, dep, dep)
		}
	}
	return nil
}

// setPermits sets dep's permits (0 removes them), refusing a negative
// count under the field name.
func (s *Strategy) setPermits(name, dep string, n int) error {
	switch {
	case n < 0:
		return field.Errorf(name, "%d must be ≥ 1 (or 0 for none)", n)
	case n == 0:
		delete(s.Permits, dep)
	default:
		s.Permits[dep] = n
	}
	return nil
}

// setRate sets dep's calls per lab second (0 removes its rate limit).
func (s *Strategy) setRate(dep string, r float64) {
	if r == 0 {
		delete(s.Rates, dep)
		return
	}
	s.Rates[dep] = r
}

// apply is the retries r with the overrides: the lab's policy without a
// budget when r is nil.
func (o RetryOverrides) apply(r *Retries) *Retries {
	out := LabRetries(false)
	if r != nil {
		c := *r
		out = &c
	}
	if o.Attempts != nil {
		out.Attempts = *o.Attempts
	}
	if o.BaseBackoff != nil {
		out.BaseBackoff = *o.BaseBackoff
	}
	if o.MaxBackoff != nil {
		out.MaxBackoff = *o.MaxBackoff
	}
	switch {
	case o.NoBudget:
		out.Budget = nil
	case o.Budget != nil:
		b := *o.Budget
		out.Budget = &b
	}
	return out
}
