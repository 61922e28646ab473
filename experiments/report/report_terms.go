package report

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

// strategiesText says, for each strategy of the matrix, what it bounds, so
// that a reader of the report alone knows what C1 or C4 is.
func strategiesText(sp design.Spec) string {
	var each []string
	for _, name := range sp.Strategies {
		if name == design.Advised {
			each = append(each, name+" — made before the matrix by loadlab advise from probes of each dependency, per scenario (see Advised strategies)")
			continue
		}
		if _, ok := sp.StrategyFiles[name]; ok {
			st, _ := sp.Strategy(design.Cell{Strategy: name}, nil)
			each = append(each, fmt.Sprintf("%s — from %s: %s", name, sp.StrategyFiles[name], st.Describe()))
			continue
		}
		if st, ok := sp.OwnStrategy(name); ok { // not a file's: given inline
			each = append(each, fmt.Sprintf("%s — given inline: %s", name, st.Describe()))
			continue
		}
		st, err := strategy.Parse(name)
		if err != nil {
			each = append(each, name+" — not a strategy loadlab knows")
			continue
		}
		each = append(each, name+" — "+st.Describe())
	}
	if len(each) == 0 {
		return ""
	}
	return fmt.Sprintf("Strategies (call timeout %s, permit timeout %s for all): %s.", sp.CallTimeout, sp.PermitTimeout, strings.Join(each, "; "))
}

// testText is a verdict's test with what it is taken of: "peak_records_in_flight
// − gomaxprocs == 0", "accepted_per_second ÷ C3/healthy/cpus-1's, paired by
// run ≥ 0.8"; the operator and threshold alone when the hypothesis is not
// among hs.
func testText(v resultsfile.Verdict, hs []design.Hypothesis) string {
	test := string(v.Op) + " " + v.Threshold.String()
	for _, h := range hs {
		if h.ID != v.ID {
			continue
		}
		of := h.MetricKey()
		if h.Minus != "" {
			of += " − " + design.PhaseKey(h.Phase, h.Minus)
		}
		if h.Versus != nil {
			op := "÷"
			if h.Compare == design.Difference {
				op = "−"
			}
			of = fmt.Sprintf("%s %s %s's", of, op, h.Versus)
			if v.Rules.Paired() {
				of += ", paired by run,"
			}
		}
		return of + " " + test
	}
	return test
}
