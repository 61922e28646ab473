package strategy

import (
	"fmt"
	"time"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/mockservice/field"
)

// Retries is how a strategy tries failed calls again: a policy (attempts,
// exponential backoff with full jitter) and, optionally, a retry budget per
// dependency. Durations and the budget's rate are in lab units (the run
// scales them). Without a budget the retries are naive: every failure is
// retried up to the attempts.
type Retries struct {
	budgets.RetryPolicy `yaml:",inline"`
	// Budget is each dependency's retry budget (each has its own bucket);
	// nil: none.
	Budget *budgets.RetryBudgetConfig `json:"budget,omitempty" yaml:"budget,omitempty"`
}

// The lab's retries: 3 attempts (gRPC's usual maxAttempts), backoff
// ceilings from 25 ms doubling to 1 s (lab), and for C6 Finagle's budget
// shape: 20% of first attempts within 10 lab s, plus a reserve of 2 retries
// per lab second (a few: Finagle's 10 per second would be a quarter of the
// system of record's 40 writes per lab second under slow writes).
const (
	LabRetryAttempts = 3
	labRetryBase     = 25 * time.Millisecond
	labRetryMax      = time.Second
	// DefaultRetryBudgetTTL is how long a first attempt's deposit lasts in
	// a retry budget given no TTL (lab time).
	DefaultRetryBudgetTTL = 10 * time.Second
)

// LabRetries returns the lab's retry policy, with the lab's retry budget
// when budgeted.
func LabRetries(budgeted bool) *Retries {
	r := &Retries{RetryPolicy: budgets.RetryPolicy{Attempts: LabRetryAttempts, BaseBackoff: labRetryBase, MaxBackoff: labRetryMax}}
	if budgeted {
		r.Budget = &budgets.RetryBudgetConfig{Ratio: 0.2, MinPerSecond: 2, TTL: DefaultRetryBudgetTTL}
	}
	return r
}

// Validate names the first bad field: a *field.Error for "retries"
// ("attempts: …") or "retries.budget" ("ratio: …").
func (r *Retries) Validate() error {
	if r == nil {
		return nil
	}
	if err := r.RetryPolicy.Validate(); err != nil {
		return field.Within("retries", err)
	}
	if r.Budget != nil {
		if err := r.Budget.Validate(); err != nil {
			return field.Within("retries.budget", err)
		}
	}
	return nil
}

// Describe is the retries in words.
func (r *Retries) Describe() string {
	s := fmt.Sprintf("retries: %d attempts, full-jitter backoff from %v to %v (lab)", r.Attempts, r.BaseBackoff, r.MaxBackoff)
	if r.Budget == nil {
		return s + ", no retry budget"
	}
	return s + fmt.Sprintf(", a retry budget per dependency of %g of first attempts within %v plus %g per lab s",
		r.Budget.Ratio, r.Budget.TTL, r.Budget.MinPerSecond)
}
