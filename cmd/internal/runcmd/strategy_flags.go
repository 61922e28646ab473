package runcmd

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/field"
)

// overrides are the strategy flags given, as the strategy package takes
// them for a run of pipeline p (each parsed already, as its flag was;
// Strategy.With checks them against the strategy and the pipeline), and
// the flags its errors name: runFlags, and the lab's budgets' flags by
// the budget each sets.
func (o *runOptions) overrides(p *pipeline.Pipeline) (strategy.Overrides, field.Names, error) {
	over := strategy.Overrides{RecordsInFlight: given(&o.inFlight), SharedPermits: given(&o.shared)}
	if o.permits.M != nil {
		over.Permits = map[string]int{}
		for k, v := range o.permits.M {
			over.Permits[k] = int(v)
		}
	}
	if o.rates.M != nil {
		over.Rates = maps.Clone(o.rates.M)
	}
	over.Adaptive = o.adaptive.limits
	over.Retries = o.retries.overrides()
	names, err := o.labBudgets(&over, p)
	return over, names, err
}

// labBudgets folds the flags of the lab's dependencies' budgets
// (--enrichment-permits, --write-permits, --enrichment-rate, --write-rate)
// into over's Permits and Rates, as --permits and --rates give them by
// name, and returns runFlags with each budget set so named by its flag. A
// flag is refused, naming it, for a pipeline p that lacks its dependency,
// when --permits or --rates names the dependency too, or for a value no
// budget has.
func (o *runOptions) labBudgets(over *strategy.Overrides, p *pipeline.Pipeline) (field.Names, error) {
	names := maps.Clone(runFlags)
	for _, lab := range []struct {
		flag, dep string
		permits   *cli.Optional[int]
		rate      *cli.Optional[float64]
	}{
		{"enrichment-permits", api.Enrichment, &o.enrichPermits, nil},
		{"write-permits", api.Records, &o.writePerms, nil},
		{"enrichment-rate", api.Enrichment, nil, &o.enrichRate},
		{"write-rate", api.Records, nil, &o.writeRate},
	} {
		_, byName := o.permits.M[lab.dep]
		if lab.rate != nil {
			_, byName = o.rates.M[lab.dep]
		}
		switch {
		case (lab.permits == nil || !lab.permits.Given) && (lab.rate == nil || !lab.rate.Given):
			continue
		case p.Dependency(lab.dep) == nil:
			return names, usageErr("run: --%s: names the lab's %s, which pipeline %s lacks: give its dependencies' budgets by name (%s)",
				lab.flag, lab.dep, p.Name, strings.Join(p.Names(), ", "))
		case byName:
			return names, usageErr("run: --%s: %s's budget is given by name too: give it once", lab.flag, lab.dep)
		case lab.permits != nil && lab.permits.V < 0:
			return names, usageErr("run: --%s: %d must be ≥ 1 (or 0 for none)", lab.flag, lab.permits.V)
		case lab.rate != nil && (lab.rate.V < 0 || math.IsNaN(lab.rate.V) || math.IsInf(lab.rate.V, 0)):
			return names, usageErr("run: --%s: %v must be ≥ 0 (0 for none)", lab.flag, lab.rate.V)
		}
		if lab.permits != nil {
			if over.Permits == nil {
				over.Permits = map[string]int{}
			}
			over.Permits[lab.dep] = lab.permits.V
			names["strategy.permits."+lab.dep] = "--" + lab.flag
		} else {
			if over.Rates == nil {
				over.Rates = map[string]float64{}
			}
			over.Rates[lab.dep] = lab.rate.V
			names["strategy.rates."+lab.dep] = "--" + lab.flag
		}
	}
	return names, nil
}

// given is the flag's value when it was given, else nil.
func given[T int | float64](f *cli.Optional[T]) *T {
	if !f.Given {
		return nil
	}
	return &f.V
}

// wholePermits refuses --permits' numbers that are not whole and ≥ 0.
func wholePermits(_ string, v float64) error {
	if v != math.Trunc(v) || v < 0 {
		return fmt.Errorf("%v is not a whole number ≥ 0", v)
	}
	return nil
}

// adaptiveFlag is --adaptive (strategy.AdaptiveUsage): the limits by
// dependency, nil until given; a flag given again adds its dependencies.
type adaptiveFlag struct {
	limits map[string]*strategy.AdaptiveLimit
	text   []string
}

func (a *adaptiveFlag) String() string { return strings.Join(a.text, ",") }

// TakesText marks the flag as cli.Text.
func (*adaptiveFlag) TakesText() {}

func (a *adaptiveFlag) Set(text string) error {
	m, err := strategy.ParseAdaptive(text)
	if err != nil {
		return err
	}
	if a.limits == nil {
		a.limits = map[string]*strategy.AdaptiveLimit{}
	}
	maps.Copy(a.limits, m)
	a.text = append(a.text, text)
	return nil
}

// retryFlagValues are loadlab run's retry flags, applied over the
// strategy's retries.
type retryFlagValues struct {
	attempts cli.Optional[int]
	backoff  backoffFlag
	budget   retryBudgetFlag
}

func retryFlags(fs *flag.FlagSet) *retryFlagValues {
	f := &retryFlagValues{}
	fs.Var(&f.attempts, "retries", "attempts per call, the first included (1: no retry): a failed call (503/429, call timeout,\n"+
		"transport error; not a permit or rate timeout) is tried again after a full-jitter backoff; writes keep\n"+
		"their record id. C6 is C4 with 3 attempts and a retry budget, C2-retries C2 with 3 and none")
	fs.Var(&f.backoff, "retry-backoff", "BASE:MAX lab durations of the full-jitter backoff: the wait before retry n is uniform in\n"+
		"[0, min(MAX, BASE × 2^(n-1))] (default 25ms:1s)")
	fs.Var(&f.budget, "retry-budget", "RATIO:MIN_PER_SECOND[:TTL] a retry budget per dependency (Finagle's): each first attempt\n"+
		"deposits RATIO (in [0, 1]) of a token for TTL (lab, default 10s), each retry takes one, with a reserve of\n"+
		"MIN_PER_SECOND retries per lab second; off: none (C6: 0.2:2:10s)")
	return f
}

// overrides are the retry flags given, as the strategy package takes them
// (nil when none was given).
func (f *retryFlagValues) overrides() *strategy.RetryOverrides {
	if !f.attempts.Given && f.backoff.text == "" && f.budget.text == "" {
		return nil
	}
	o := &strategy.RetryOverrides{Attempts: given(&f.attempts), Budget: f.budget.b, NoBudget: f.budget.text != "" && f.budget.b == nil}
	if f.backoff.text != "" {
		o.BaseBackoff, o.MaxBackoff = &f.backoff.base, &f.backoff.max
	}
	return o
}

// backoffFlag is --retry-backoff BASE:MAX.
type backoffFlag struct {
	base, max time.Duration
	text      string
}

func (b *backoffFlag) String() string { return b.text }

// TakesText marks the flag as cli.Text.
func (*backoffFlag) TakesText() {}

func (b *backoffFlag) Set(text string) error {
	base, maxB, ok := strings.Cut(text, ":")
	x, err := time.ParseDuration(base)
	y, err2 := time.ParseDuration(maxB)
	if err != nil || err2 != nil || !ok {
		return fmt.Errorf("%q is not BASE:MAX (durations, e.g. 25ms:1s)", text)
	}
	b.base, b.max, b.text = x, y, text
	return nil
}

// retryBudgetFlag is --retry-budget RATIO:MIN_PER_SECOND[:TTL], or off (b
// nil, text given).
type retryBudgetFlag struct {
	b    *budgets.RetryBudgetConfig
	text string
}

func (r *retryBudgetFlag) String() string { return r.text }

// TakesText marks the flag as cli.Text.
func (*retryBudgetFlag) TakesText() {}

func (r *retryBudgetFlag) Set(text string) error {
	b, err := budgets.ParseRetryBudget(text, strategy.DefaultRetryBudgetTTL)
	if err != nil {
		return err
	}
	r.b, r.text = b, text
	return nil
}
