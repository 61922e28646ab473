package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/records"
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

// apply sets s.Retries from the flags given (none given: s unchanged).
func (f retryFlagValues) apply(fs *flag.FlagSet, s *records.Strategy) error {
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if !given["retries"] && !given["retry-backoff"] && !given["retry-budget"] {
		return nil
	}
	r := records.LabRetries(false)
	if s.Retries != nil {
		c := *s.Retries
		r = &c
	}
	if given["retries"] {
		r.Attempts = *f.attempts
	}
	if given["retry-backoff"] {
		base, maxB, ok := strings.Cut(*f.backoff, ":")
		var err error
		if r.BaseBackoff, err = time.ParseDuration(base); err == nil && ok {
			r.MaxBackoff, err = time.ParseDuration(maxB)
		}
		if err != nil || !ok {
			return fmt.Errorf("--retry-backoff: %q is not BASE:MAX (durations, e.g. 25ms:1s)", *f.backoff)
		}
	}
	if given["retry-budget"] {
		if err := setRetryBudget(*f.quota, r); err != nil {
			return fmt.Errorf("--retry-budget: %w", err)
		}
	}
	if err := r.Validate(); err != nil {
		return errors.New("--" + strings.Replace(strings.Replace(err.Error(), "retries.budget.", "retry-budget: ", 1), "retries.", "retries: ", 1))
	}
	s.Retries = r
	return nil
}

// setRetryBudget reads RATIO:MIN_PER_SECOND[:TTL] or off.
func setRetryBudget(text string, r *records.Retries) error {
	if text == "off" {
		r.Budget = nil
		return nil
	}
	parts := strings.Split(text, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return fmt.Errorf("%q is not RATIO:MIN_PER_SECOND[:TTL] or off", text)
	}
	b := budgets.RetryBudgetConfig{TTL: 10 * time.Second}
	var err error
	if b.Ratio, err = strconv.ParseFloat(parts[0], 64); err != nil {
		return fmt.Errorf("ratio: %q is not a number", parts[0])
	}
	if b.MinPerSecond, err = strconv.ParseFloat(parts[1], 64); err != nil {
		return fmt.Errorf("min_per_second: %q is not a number", parts[1])
	}
	if len(parts) == 3 {
		if b.TTL, err = time.ParseDuration(parts[2]); err != nil {
			return fmt.Errorf("ttl: %q is not a duration", parts[2])
		}
	}
	r.Budget = &b
	return nil
}
