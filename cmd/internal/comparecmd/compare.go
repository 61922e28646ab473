// Package comparecmd is loadlab compare BEFORE AFTER: two sets of runs of
// one workload, before and after a change, read (an experiment's results
// folders, or the JSON of loadlab run or loadlab load), checked to be
// comparable, compared metric by metric and cell by cell
// (experiments/beforeafter) and printed as a table, Markdown or JSON; a
// significant regression beyond the minimum effect exits 99.
package comparecmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/client/threshold"
	"github.com/loadlab/loadlab/cmd/internal/cli"
	"github.com/loadlab/loadlab/experiments/beforeafter"
	"github.com/loadlab/loadlab/mockservice/field"
)

// ExitRegression is the exit code of a significant regression: the code
// of a breached --threshold.
const ExitRegression = threshold.ExitBreached

// options is loadlab compare's command line.
type options struct {
	cmp          beforeafter.Options
	metrics      names
	cells        names
	minEffect    percent
	asJSON, asMD bool
}

// names is a flag of comma-separated names, repeatable.
type names struct{ List []string }

func (n *names) String() string { return strings.Join(n.List, ",") }

// TakesText marks names as text in the help.
func (*names) TakesText() {}

func (n *names) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			n.List = append(n.List, x)
		}
	}
	return nil
}

// percent is a fraction given as 0.05 or 5%; a bare number of 1 or more,
// more likely a percentage without its sign than a change of 100% or
// more, is refused.
type percent struct{ v *float64 }

func (p percent) String() string {
	if p.v == nil {
		return ""
	}
	return strconv.FormatFloat(100**p.v, 'g', -1, 64) + "%"
}

// TakesText marks percent as text in the help.
func (percent) TakesText() {}

func (p percent) Set(s string) error {
	t, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number (0.05 or 5%%)", s)
	}
	if pct {
		v /= 100
	} else if v >= 1 {
		return fmt.Errorf("%s as a fraction is %g%%: for %s%% write %s%% or %g; a bare fraction must be below 1 "+
			"(a change of 100%% or more: write it with %%)", t, 100*v, t, t, v/100)
	}
	*p.v = v
	return nil
}

func (o *options) bind(fs *flag.FlagSet) {
	o.cmp = beforeafter.Defaults()
	o.minEffect = percent{&o.cmp.MinEffect}
	fs.Var(&o.metrics, "metric", "NAME[,NAME]: the metrics compared (default: accepted_per_second, duration_seconds, rejected.NAME for\n"+
		"each dependency, call_timeouts, permit_timeouts for runs; on_time, rejected, timed_out, p50_ms, p95_ms,\n"+
		"p99_ms for loads); fewer metrics need fewer runs")
	fs.Var(&o.cells, "cell", "CELL[,CELL]: compare only these cells of results folders (strategy/scenario/cpu, e.g. C4/healthy/cpus-1)")
	fs.Var(o.minEffect, "min-effect", "the smallest change called a change, as a fraction below 1 or a percentage of the metric (0.05 or 5%)")
	fs.Float64Var(&o.cmp.Alpha, "alpha", o.cmp.Alpha, "the family-wise chance of calling any change where there is none: Holm's correction over\n"+
		"every comparison whose values vary")
	fs.BoolVar(&o.asJSON, "json", false, "print the comparison as one JSON object")
	fs.BoolVar(&o.asMD, "markdown", false, "print the comparison as Markdown (a table for a CI comment)")
}

// Main is loadlab compare.
func Main(args []string, stdout io.Writer) error {
	fs, parse := cli.NewFlagSet("compare BEFORE AFTER", intro+synopsis, stdout, groups...)
	var o options
	o.bind(fs)
	flags, paths := splitArgs(args, fs)
	if err := parse(flags); err != nil {
		return err
	}
	if len(paths) != 2 {
		return cli.UsageErr("compare: want BEFORE and AFTER (each a results folder, a folder or file of --json results, or a quoted glob), got %d argument(s)", len(paths))
	}
	if o.asJSON && o.asMD {
		return cli.UsageErr("compare: --json and --markdown: give one")
	}
	o.cmp.Metrics = o.metrics.List
	if err := o.cmp.Validate(); err != nil {
		return cli.UsageErr("compare: %v", err)
	}
	before, after, changed, err := o.read(paths[0], paths[1])
	if err != nil {
		return err
	}
	rep, cmpErr := beforeafter.Compare(before.side, after.side, o.cmp)
	var few *beforeafter.TooFewRuns
	if cmpErr != nil && !errors.As(cmpErr, &few) {
		return cli.UsageErr("compare: %v", metricHint(cmpErr, before.side.Kind))
	}
	out := outcome{Before: infoOf(before), After: infoOf(after), Changed: changed, Rule: rule(rep), Report: rep, Regressions: regressions(rep)}
	if few != nil {
		out.TooFewRuns = few.Error()
	}
	switch {
	case o.asJSON:
		if err := cli.WriteJSON(stdout, out); err != nil {
			return err
		}
	case o.asMD:
		writeMarkdown(stdout, out)
	default:
		writeText(stdout, out)
	}
	switch {
	case few != nil:
		return cli.UsageErr("compare: too few runs: %v", few)
	case len(out.Regressions) > 0:
		return &cli.ExitError{Code: ExitRegression, Err: fmt.Errorf("compare: %d significant regression(s) beyond the minimum effect of %g%%: %s",
			len(out.Regressions), 100*o.cmp.MinEffect, strings.Join(out.Regressions, "; "))}
	}
	return nil
}

// read reads both sides, checks they match and keeps the cells asked for.
func (o *options) read(b, a string) (*input, *input, []string, error) {
	before, err := readInput(b)
	if err != nil {
		return nil, nil, nil, cli.UsageErr("compare: before: %v", err)
	}
	after, err := readInput(a)
	if err != nil {
		return nil, nil, nil, cli.UsageErr("compare: after: %v", err)
	}
	changed, err := match(before, after)
	if err != nil {
		return nil, nil, nil, cli.UsageErr("compare: %v", err)
	}
	if len(o.cells.List) > 0 {
		for _, in := range []*input{before, after} {
			if err := keepCells(in, o.cells.List); err != nil {
				return nil, nil, nil, cli.UsageErr("compare: --cell: %v", err)
			}
		}
	}
	return before, after, changed, nil
}

// keepCells keeps in's cells named, refusing a name it lacks.
func keepCells(in *input, names []string) error {
	var kept []beforeafter.Cell
	var all []string
	for _, c := range in.side.Cells {
		all = append(all, c.Name)
	}
	for _, n := range names {
		found := false
		for _, c := range in.side.Cells {
			if c.Name == n {
				kept, found = append(kept, c), true
			}
		}
		if !found {
			hint := ""
			if c := field.Closest(n, all); c != "" {
				hint = fmt.Sprintf(" (did you mean %s?)", c)
			}
			return fmt.Errorf("%s has no cell %q%s; it has: %s", in.arg, n, hint, strings.Join(all, ", "))
		}
	}
	in.side.Cells = kept
	return nil
}

// metricHint adds "did you mean" to an error about a --metric name.
func metricHint(err error, kind beforeafter.Kind) error {
	msg := err.Error()
	_, rest, ok := strings.Cut(msg, `no metric "`)
	if !ok {
		return err
	}
	name, _, _ := strings.Cut(rest, `"`)
	if c := field.Closest(name, beforeafter.Names(kind)); c != "" {
		return fmt.Errorf("%w (did you mean %s?)", err, c)
	}
	return err
}

// splitArgs parts the flags from BEFORE and AFTER, which come before,
// between or after them: an argument not a flag, nor the value of a flag
// that takes one, is a path.
func splitArgs(args []string, fs *flag.FlagSet) (flags, paths []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(paths, args[i+1:]...)
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			paths = append(paths, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBool(f) && i+1 < len(args) {
			flags, i = append(flags, args[i+1]), i+1
		}
	}
	return flags, paths
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
