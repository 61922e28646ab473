package main

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// outcome is how an experiment that ran to its end exits: 1 when runs
// were not valid, when verdicts are provisional (a bias not measured or
// unresolved), or when the calibration left nothing judged.
func outcome(res *resultsfile.Results) error {
	if why := shortfalls(res); len(why) > 0 {
		return &cli.ExitError{Code: exitFailed, Err: fmt.Errorf("experiment: %s", strings.Join(why, "; "))}
	}
	return nil
}

// shortfalls are why an experiment that ran to its end did not end well,
// each a sentence that says what to do: runs that were not valid,
// verdicts left provisional (a bias not measured or unresolved), or
// nothing judged for biases beyond the limit. None: every run valid and
// every verdict final.
func shortfalls(res *resultsfile.Results) []string {
	var why []string
	failed := 0
	for _, run := range res.Runs {
		if !run.Valid() {
			failed++
		}
	}
	if failed > 0 {
		why = append(why, fmt.Sprintf("%d of %d runs were not valid: failed, contaminated or invalid (listed in the report)", failed, len(res.Runs)))
	}
	if n := judge.Provisional(res.Verdicts); n > 0 {
		why = append(why, fmt.Sprintf("%s provisional: the time-scale bias of cells they read was not measured or did not resolve "+
			"(--accept-uncalibrated makes them final, or loadlab check --accept-uncalibrated DIR after the run)", verdictsAre(n)))
	}
	if n := judge.GatedByBias(res.Verdicts); n > 0 && n == len(res.Verdicts) {
		why = append(why, "nothing could be judged: every verdict reads a cell whose time-scale bias is beyond the limit (--accept-bias, or loadlab check --accept-bias DIR)")
	}
	return why
}

// verdictsAre is "1 verdict is" or "n verdicts are".
func verdictsAre(n int) string {
	if n == 1 {
		return "1 verdict is"
	}
	return fmt.Sprintf("%d verdicts are", n)
}
