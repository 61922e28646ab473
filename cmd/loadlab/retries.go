package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/strategy"
)

// retryFlagValues are loadlab run's retry flags, applied over the
// strategy's retries.
type retryFlagValues struct {
	attempts       *int
	backoff, quota *string
}

func retryFlags(fs *flag.FlagSet) retryFlagValues {
	return retryFlagValues{
		attempts: fs.Int("retries", 0, "attempts per call, the first included (1: no retry): a failed call (503/429, call timeout,\n"+
			"transport error; not a permit or rate timeout) is tried again after a full-jitter backoff; writes keep\n"+
			"their record id. C6 is C4 with 3 attempts and a retry budget, C2-retries C2 with 3 and none"),
		backoff: fs.String("retry-backoff", "", "BASE:MAX lab durations of the full-jitter backoff: the wait before retry n is uniform in\n"+
			"[0, min(MAX, BASE × 2^(n-1))] (default 25ms:1s)"),
		quota: fs.String("retry-budget", "", "RATIO:MIN_PER_SECOND[:TTL] a retry budget per dependency (Finagle's): each first attempt\n"+
			"deposits RATIO (in [0, 1]) of a token for TTL (lab, default 10s), each retry takes one, with a reserve of\n"+
			"MIN_PER_SECOND retries per lab second; off: none (C6: 0.2:2:10s)"),
	}
}

// overrides are the retry flags given, as the records package takes them
// (nil when none was given).
func (f retryFlagValues) overrides(given map[string]bool) (*strategy.RetryOverrides, error) {
	if !given["retries"] && !given["retry-backoff"] && !given["retry-budget"] {
		return nil, nil
	}
	o := &strategy.RetryOverrides{}
	if given["retries"] {
		o.Attempts = f.attempts
	}
	if given["retry-backoff"] {
		base, maxB, ok := strings.Cut(*f.backoff, ":")
		b, err := time.ParseDuration(base)
		m, err2 := time.ParseDuration(maxB)
		if err != nil || err2 != nil || !ok {
			return nil, fmt.Errorf("--retry-backoff: %q is not BASE:MAX (durations, e.g. 25ms:1s)", *f.backoff)
		}
		o.BaseBackoff, o.MaxBackoff = &b, &m
	}
	if given["retry-budget"] {
		b, err := budgets.ParseRetryBudget(*f.quota, strategy.DefaultRetryBudgetTTL)
		if err != nil {
			return nil, fmt.Errorf("--retry-budget: %w", err)
		}
		o.Budget, o.NoBudget = b, b == nil
	}
	return o, nil
}
