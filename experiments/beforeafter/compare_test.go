package beforeafter

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// cellOf is a cell of runs with the given values of each metric, run by
// run; seeds, when given, run by run.
func cellOf(name string, seeds []uint32, metrics map[string][]float64) Cell {
	c := Cell{Name: name}
	n := 0
	for _, vs := range metrics {
		n = max(n, len(vs))
	}
	for i := range n {
		r := Run{Values: map[string]float64{}}
		if seeds != nil {
			r.Seed, r.HasSeed = seeds[i], true
		}
		for k, vs := range metrics {
			if i < len(vs) {
				r.Values[k] = vs[i]
			}
		}
		c.Runs = append(c.Runs, r)
	}
	return c
}

func side(cells ...Cell) Side { return Side{Kind: Runs, Cells: cells} }

func row(t *testing.T, rep Report, cell, metric string) Row {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Cell == cell && r.Metric.Name == metric {
			return r
		}
	}
	t.Fatalf("no row %s %s in %+v", cell, metric, rep.Rows)
	return Row{}
}

// A halved accepted rate is worse (a ratio near 0.5, Holm's p over the
// two metrics that vary); rejections from none to many are worse on the
// difference scale; a metric that never varies is no change and not
// counted; a 3% shift, however clear, is within the minimum effect.
func TestDecisions(t *testing.T) {
	t.Parallel()
	before := side(cellOf("c", nil, map[string][]float64{
		"accepted_per_second": {30, 31, 29.5, 30.5, 30.2}, "duration_seconds": {3.3, 3.2, 3.4, 3.3, 3.31},
		"rejected.records": {0, 0, 0, 0, 0}, "call_timeouts": {0, 0, 0, 0, 0}, "permit_timeouts": {1, 1, 1, 1, 1}}))
	after := side(cellOf("c", nil, map[string][]float64{
		"accepted_per_second": {15, 16, 15.5, 14.8, 15.2}, "duration_seconds": {3.4, 3.41, 3.42, 3.43, 3.44},
		"rejected.records": {40, 52, 47, 45, 50}, "call_timeouts": {0, 0, 0, 0, 0}, "permit_timeouts": {1, 1, 1, 1, 1}}))
	rep, err := Compare(before, after, Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Comparisons != 3 || rep.RunsNeeded != 5 {
		t.Errorf("comparisons %d, runs needed %d; want 3 and 5", rep.Comparisons, rep.RunsNeeded)
	}
	acc := row(t, rep, "c", "accepted_per_second")
	if acc.Decision != Worse || acc.Scale != Ratio || acc.Test != Unpaired || !near(*acc.P, 2.0/252) || !near(*acc.HolmP, 3*2.0/252) ||
		math.Abs(*acc.Estimate-0.5) > 0.03 || !(*acc.Lo <= *acc.Estimate && *acc.Estimate <= *acc.Hi && *acc.Hi < 1) {
		t.Errorf("accepted: %+v", acc)
	}
	rej := row(t, rep, "c", "rejected.records")
	if rej.Decision != Worse || rej.Scale != Difference || rej.Change != nil || *rej.Estimate != 47 {
		t.Errorf("rejections: %+v", rej)
	}
	if d := row(t, rep, "c", "duration_seconds"); d.Decision != NoChange || !strings.Contains(d.Note, "within the minimum effect") {
		t.Errorf("duration 3%% longer: %+v", d)
	}
	if c := row(t, rep, "c", "call_timeouts"); c.Decision != NoChange || c.P != nil || !strings.Contains(c.Note, "nothing varies") {
		t.Errorf("timeouts all 0: %+v", c)
	}
	if len(rep.Worse()) != 2 {
		t.Errorf("worse: %+v", rep.Worse())
	}
	// The other way round: better.
	rep, _ = Compare(after, before, Defaults())
	if r := row(t, rep, "c", "accepted_per_second"); r.Decision != Better || math.Abs(*r.Estimate-2) > 0.1 {
		t.Errorf("reversed: %+v", r)
	}
	// No minimum effect: the 3% is called.
	o := Defaults()
	o.MinEffect = 0
	rep, _ = Compare(before, after, o)
	if r := row(t, rep, "c", "duration_seconds"); r.Decision != Worse {
		t.Errorf("no minimum effect: %+v", r)
	}
}

// Too few runs for the level is an error that says how many are needed,
// with the rows marked; cells and kinds that differ are refused naming
// what differs; a metric named that is not in the table is refused.
func TestRefusals(t *testing.T) {
	t.Parallel()
	three := side(cellOf("c", nil, map[string][]float64{"accepted_per_second": {1, 2, 3}, "duration_seconds": {3, 2, 1}}))
	rep, err := Compare(three, three, Defaults())
	var few *TooFewRuns
	if !errors.As(err, &few) || few.Needed != 5 || !strings.Contains(err.Error(), "needs at least 5 runs on each side") ||
		rep.Rows[0].Decision != NotEnough {
		t.Errorf("3 v 3 over 2 comparisons: %v, %+v", err, rep.Rows)
	}
	o := Defaults()
	o.Metrics = []string{"accepted_per_second"}
	four := side(cellOf("c", nil, map[string][]float64{"accepted_per_second": {1, 2, 3, 4}}))
	if _, err := Compare(four, four, o); err != nil {
		t.Errorf("4 v 4 over one comparison: %v", err)
	}
	other := side(cellOf("d", nil, map[string][]float64{"accepted_per_second": {1, 2, 3, 4}}))
	if _, err := Compare(four, other, o); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "only before has c; only after has d") {
		t.Errorf("cells differ: %v", err)
	}
	loads := other
	loads.Kind = Loads
	if _, err := Compare(four, loads, o); !errors.Is(err, ErrMismatch) {
		t.Errorf("kinds differ: %v", err)
	}
	o.Metrics = []string{"p99_ms"}
	if _, err := Compare(four, four, o); err == nil || !strings.Contains(err.Error(), `no metric "p99_ms" for runs`) {
		t.Errorf("a load's metric of runs: %v", err)
	}
	o.Metrics = []string{"rejected.geo"}
	if _, err := Compare(four, four, o); !errors.Is(err, ErrMismatch) {
		t.Errorf("a metric neither side has: %v", err)
	}
}

// Both sides on the same seeds, pairs enough for the level: the paired
// test, on the log ratios seed by seed; too few pairs: unpaired.
func TestPairedBySeed(t *testing.T) {
	t.Parallel()
	seeds := []uint32{1, 2, 3, 4, 5, 6, 7, 8}
	base := []float64{30, 20, 40, 25, 35, 28, 33, 22} // seeds differ more than the change
	worse := make([]float64, len(base))
	for i, v := range base {
		worse[i] = v * (0.9 + 0.001*float64(i))
	}
	o := Defaults()
	o.Metrics = []string{"accepted_per_second"}
	rep, err := Compare(side(cellOf("c", seeds, map[string][]float64{"accepted_per_second": base})),
		side(cellOf("c", seeds, map[string][]float64{"accepted_per_second": worse})), o)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Rows[0]
	if r.Test != Paired || r.Pairs != 8 || !near(*r.P, 2.0/256) || r.Decision != Worse || math.Abs(*r.Estimate-0.9035) > 0.002 {
		t.Errorf("paired: %+v (p %v, estimate %v)", r, *r.P, *r.Estimate)
	}
	// Unpaired, the seeds' spread hides the same change.
	rep, _ = Compare(side(cellOf("c", nil, map[string][]float64{"accepted_per_second": base})),
		side(cellOf("c", nil, map[string][]float64{"accepted_per_second": worse})), o)
	if r := rep.Rows[0]; r.Test != Unpaired || r.Decision != NoChange {
		t.Errorf("unpaired: %+v", r)
	}
	// Five pairs cannot reach 0.05 (2/32): the unpaired test is used.
	rep, _ = Compare(side(cellOf("c", seeds[:5], map[string][]float64{"accepted_per_second": base[:5]})),
		side(cellOf("c", seeds[:5], map[string][]float64{"accepted_per_second": worse[:5]})), o)
	if r := rep.Rows[0]; r.Test != Unpaired {
		t.Errorf("five pairs: %+v", r)
	}
}

// selfComparisons compares one configuration with itself n times: runs
// per side of six metrics drawn alike on both sides (log-normal rates and
// durations of 2% to 30% spread, rejection and timeout counts that are
// mostly 0), from seed. Paired, both sides run seeds 1 to runs, and each
// seed has an effect of its own on every rate, duration and count,
// shared by both sides, larger than the runs' noise. It returns the
// comparisons with any change called, the changes called and the
// comparisons tested paired.
func selfComparisons(n, runs int, seed uint64, o Options, paired bool) (alarms, calls, pairedRows int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	draw := func(effect []float64) Cell {
		c := Cell{Name: "C4/healthy"}
		for i := range runs {
			e := 1.0
			if paired {
				e = effect[i]
			}
			v := map[string]float64{
				"accepted_per_second": 30 * e * math.Exp(0.02*rng.NormFloat64()),
				"duration_seconds":    3.3 / e * math.Exp(0.3*rng.NormFloat64()),
				"rejected.enrichment": math.Floor(2 * e * rng.ExpFloat64()),
				"rejected.records":    math.Max(0, math.Floor(40*e+12*rng.NormFloat64())),
				"call_timeouts":       float64(rng.IntN(2)),
				"permit_timeouts":     math.Floor(rng.ExpFloat64() * 0.5 * e),
			}
			r := Run{Values: v}
			if paired {
				r.Seed, r.HasSeed = uint32(i+1), true
			}
			c.Runs = append(c.Runs, r)
		}
		return c
	}
	for range n {
		var effect []float64
		if paired {
			for range runs {
				effect = append(effect, math.Exp(0.3*rng.NormFloat64()))
			}
		}
		rep, err := Compare(side(draw(effect)), side(draw(effect)), o)
		if err != nil {
			panic(err)
		}
		k := 0
		for _, r := range rep.Rows {
			if r.Decision == Better || r.Decision == Worse {
				k++
			}
			if r.Test == Paired {
				pairedRows++
			}
		}
		if k > 0 {
			alarms++
		}
		calls += k
	}
	return alarms, calls, pairedRows
}

// binomialQuantile is the smallest b with P(X ≤ b) ≥ q for X of
// Binomial(n, p).
func binomialQuantile(n int, p, q float64) int {
	cdf := 0.0
	for b := 0; b <= n; b++ {
		cdf += binomial(n, b) * math.Pow(p, float64(b)) * math.Pow(1-p, float64(n-b))
		if cdf >= q {
			return b
		}
	}
	return n
}

// One configuration compared with itself, 200 times over synthetic seeded
// samples: the comparisons that call any change are within what a
// family-wise alpha of 0.05 allows at the 95% level — at most the 95th
// percentile of Binomial(200, 0.05), 15 (10 expected; a procedure whose
// false alarms were twice alpha would pass one time in seven) — at five
// runs a side with the minimum effect and without it, at ten runs a side,
// and at ten runs a side paired by seed.
func TestFalseAlarms(t *testing.T) {
	t.Parallel()
	const n = 200
	bound := binomialQuantile(n, 0.05, 0.95)
	if bound != 15 {
		t.Fatalf("the 95th percentile of Binomial(200, 0.05) is 15, computed %d", bound)
	}
	for _, c := range []struct {
		name      string
		runs      int
		minEffect float64
		paired    bool
	}{
		{"5 runs, min effect 5%", 5, 0.05, false}, {"5 runs, no min effect", 5, 0, false}, {"10 runs, min effect 5%", 10, 0.05, false},
		{"10 runs paired by seed, min effect 5%", 10, 0.05, true}, {"10 runs paired by seed, no min effect", 10, 0, true},
	} {
		o := Defaults()
		o.MinEffect = c.minEffect
		alarms, calls, pairedRows := selfComparisons(n, c.runs, 41, o, c.paired)
		t.Logf("%s: %d of %d self-comparisons called a change (%d changes called; %d comparisons paired), alpha 0.05 allows %.0f on average",
			c.name, alarms, n, calls, pairedRows, o.Alpha*n)
		if alarms > bound {
			t.Errorf("%s: %d false alarms in %d, more than %d", c.name, alarms, n, bound)
		}
		if c.paired && pairedRows < 5*n {
			t.Errorf("%s: only %d of the comparisons paired", c.name, pairedRows)
		}
	}
}

// The same synthetic configuration with its accepted rate 30% lower is
// called worse nearly every time at five runs a side: the control of
// false alarms leaves the power to see a real regression.
func TestPowerAtFiveRuns(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 9))
	hits := 0
	for range 50 {
		draw := func(scale float64) Cell {
			c := Cell{Name: "c"}
			for range 5 {
				c.Runs = append(c.Runs, Run{Values: map[string]float64{
					"accepted_per_second": scale * 30 * math.Exp(0.05*rng.NormFloat64()),
					"duration_seconds":    3.3 / scale * math.Exp(0.05*rng.NormFloat64()),
				}})
			}
			return c
		}
		rep, err := Compare(side(draw(1)), side(draw(0.7)), Defaults())
		if err != nil {
			t.Fatal(err)
		}
		if row(t, rep, "c", "accepted_per_second").Decision == Worse {
			hits++
		}
	}
	if hits < 45 {
		t.Errorf("a 30%% lower rate called worse %d times in 50", hits)
	}
}

// Any comparison with too few values a side is refused, not left out of
// the count: one run against six, one against one (its values alike or
// not), a cell with no run on one side, a metric most runs lack; each error names the cell, the
// metric and the runs needed, and nothing is judged.
func TestTooFewRunsAnyRow(t *testing.T) {
	t.Parallel()
	acc := func(vs ...float64) map[string][]float64 { return map[string][]float64{"accepted_per_second": vs} }
	six := side(cellOf("c", nil, acc(30, 31, 29, 30.5, 30.2, 29.8)))
	o := Defaults()
	o.Metrics = []string{"accepted_per_second"}
	partly := side(cellOf("c", nil, map[string][]float64{"accepted_per_second": {30, 31, 29, 30.5, 30.2, 29.8},
		"duration_seconds": {3, 3.1}}))
	for _, c := range []struct {
		name          string
		before, after Side
		o             Options
		want          string
	}{
		{"1 v 6", side(cellOf("c", nil, acc(15))), six, o, "c accepted_per_second: 1 run before and 6 after"},
		{"1 v 1", side(cellOf("c", nil, acc(15))), side(cellOf("c", nil, acc(30))), o, "c accepted_per_second: 1 run before and 1 after"},
		{"1 v 1, the same", side(cellOf("c", nil, acc(30))), side(cellOf("c", nil, acc(30))), o, "c: 1 run before and 1 after"},
		{"a cell without runs after", side(cellOf("c", nil, acc(30, 31, 29, 30.5, 30.2, 29.8)), cellOf("d", nil, acc(1, 2, 3, 4, 5, 6))),
			side(cellOf("c", nil, acc(30, 31, 29, 30.5, 30.2, 29.8)), Cell{Name: "d"}), o, "d accepted_per_second: 6 runs before and 0 after"},
		{"a cell without runs", side(cellOf("c", nil, acc(30, 31, 29, 30.5, 30.2, 29.8)), Cell{Name: "d"}),
			side(cellOf("c", nil, acc(30, 31, 29, 30.5, 30.2, 29.8)), Cell{Name: "d"}), o, "d: 0 runs before and 0 after"},
		{"a metric most runs lack", partly, partly, Defaults(), "c duration_seconds: 2 runs before and 2 after have a value (of 6 and 6)"},
	} {
		rep, err := Compare(c.before, c.after, c.o)
		var few *TooFewRuns
		if !errors.As(err, &few) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "needs at least") {
			t.Errorf("%s: %v; want a *TooFewRuns with %q", c.name, err, c.want)
			continue
		}
		for _, r := range rep.Rows {
			if r.Decision != NotEnough && r.Decision != NoChange || r.P != nil {
				t.Errorf("%s: a row judged: %+v", c.name, r)
			}
		}
	}
}

// A significant comparison whose estimated shift is 0 (most values tied)
// is no change even with no minimum effect, on the ratio scale and on the
// difference scale: it has no direction to call.
func TestZeroShiftIsNoChange(t *testing.T) {
	t.Parallel()
	fill := func(first float64, n5, n6 int) []float64 {
		out := []float64{first}
		for range n5 {
			out = append(out, 5)
		}
		for range n6 {
			out = append(out, 6)
		}
		return out
	}
	o := Defaults()
	o.MinEffect = 0
	for _, c := range []struct {
		metric, scale string
		first         float64
	}{{"accepted_per_second", Ratio, 5}, {"rejected.records", Difference, 0}} {
		o.Metrics = []string{c.metric}
		before := side(cellOf("c", nil, map[string][]float64{c.metric: fill(c.first, 19, 0)}))
		after := side(cellOf("c", nil, map[string][]float64{c.metric: fill(c.first, 11, 8)}))
		rep, err := Compare(before, after, o)
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Rows[0]
		shift := *r.Estimate
		if c.scale == Ratio {
			shift--
		}
		if r.Scale != c.scale || *r.HolmP > o.Alpha || shift != 0 || r.Decision != NoChange || !strings.Contains(r.Note, "estimated change is 0") {
			t.Errorf("%s: %+v (Holm p %v, estimate %v)", c.metric, r, *r.HolmP, *r.Estimate)
		}
	}
}

// From a median of 0 there is no relative change: no timeout before, one
// a run after, is worse however small the minimum effect leaves it, and
// the row says the minimum effect did not apply.
func TestFromZeroIgnoresMinEffect(t *testing.T) {
	t.Parallel()
	o := Defaults()
	o.Metrics = []string{"call_timeouts"}
	rep, err := Compare(side(cellOf("c", nil, map[string][]float64{"call_timeouts": {0, 0, 0, 0, 0}})),
		side(cellOf("c", nil, map[string][]float64{"call_timeouts": {1, 1, 1, 1, 1}})), o)
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Rows[0]; r.Decision != Worse || r.Change != nil || !strings.Contains(r.Note, "the minimum effect does not apply") {
		t.Errorf("0 → 1 timeout a run: %+v", r)
	}
}
