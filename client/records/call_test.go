package records

import (
	"testing"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/strategy"
)

// Each strategy gives the lab's dependencies the limiters it names: none
// (C2), one pool for both (C3), a pool of each one's own (C4), or an
// adaptive limit each (C5), which the run samples; each budget judges by
// its dependency's statuses.
func TestBuildBudgets(t *testing.T) {
	for _, name := range []string{"C2", "C3", "C4", "C5-aimd", "C5-vegas"} {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			s, err := strategy.Parse(name)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Strategy = s
			p := cfg.PipelineOrLab()
			bs, adaptive, err := buildBudgets(cfg, p, budgets.NewMetrics(nil))
			if err != nil {
				t.Fatal(err)
			}
			r := &runner{budgets: bs, adaptive: adaptive}
			e, w := bs[Enrichment].Config(), bs[Records].Config()
			for _, dep := range p.Dependencies {
				c := bs[dep.Name].Config()
				if len(c.Success) != len(dep.Success) || len(c.Rejection) != len(dep.Rejection) ||
					c.PermitTimeout != cfg.PermitTimeout || c.CallTimeout != cfg.CallTimeout {
					t.Errorf("%s: %+v, want the dependency's statuses and the run's timeouts", dep.Name, c)
				}
			}
			limits := r.limits()
			switch name {
			case "C2":
				if e.Limiter != nil || w.Limiter != nil || limits != nil {
					t.Errorf("limiters %v %v, limits %v; want none", e.Limiter, w.Limiter, limits)
				}
			case "C3":
				if e.Limiter != w.Limiter || e.Limiter.Limit() != strategy.DefaultSharedPermits || limits != nil {
					t.Errorf("limiters %v %v, limits %v; want one shared pool of %d", e.Limiter, w.Limiter, limits, strategy.DefaultSharedPermits)
				}
			case "C4":
				if e.Limiter == w.Limiter || e.Limiter.Limit() != strategy.DefaultEnrichPermits || w.Limiter.Limit() != strategy.DefaultWritePermits || limits != nil {
					t.Errorf("limiters %v %v, limits %v; want pools of 24 and 6", e.Limiter, w.Limiter, limits)
				}
			default:
				if e.Limiter != budgets.Limiter(adaptive[Enrichment]) || w.Limiter != budgets.Limiter(adaptive[Records]) ||
					len(limits) != 2 || limits[Enrichment] != strategy.DefaultEnrichPermits || limits[Records] != strategy.DefaultWritePermits {
					t.Errorf("limiters %v %v, adaptive %v, limits %v; want the adaptive limits, from 24 and 6", e.Limiter, w.Limiter, adaptive, limits)
				}
			}
		})
	}
}
