package threshold

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

var names = []string{"accepted_per_second", "records", "rejected", "write_unknown", "p99_ms"}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Threshold
	}{
		{"rejected<1%", Threshold{Text: "rejected<1%", Metric: "rejected", Op: "<", Value: 1, Percent: true}},
		{" write_unknown == 0 ", Threshold{Text: "write_unknown == 0", Metric: "write_unknown", Op: "==", Value: 0}},
		{"p99_ms<=300", Threshold{Text: "p99_ms<=300", Metric: "p99_ms", Op: "<=", Value: 300}},
		{"accepted_per_second>50.5", Threshold{Text: "accepted_per_second>50.5", Metric: "accepted_per_second", Op: ">", Value: 50.5}},
		{"records!=0", Threshold{Text: "records!=0", Metric: "records", Op: "!=", Value: 0}},
	} {
		got, err := Parse(tt.in, names)
		if err != nil || got != tt.want {
			t.Errorf("%q: %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"rejected", "want METRIC OP VALUE with OP one of"},
		{"rejected<lots", `"lots" is not a number`},
		{"rejected<NaN", `"NaN" is not a number`},
		{"rejectd<1%", `no figure "rejectd" (did you mean rejected?); the figures: accepted_per_second, records`},
		{"latency<3", `no figure "latency"; the figures:`},
	} {
		if _, err := Parse(tt.in, names); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v; want %q", tt.in, err, tt.want)
		}
	}
	ts, err := ParseAll("rejected<1%, write_unknown==0,", names)
	if err != nil || len(ts) != 2 {
		t.Errorf("a list: %v, %v", ts, err)
	}
}

// Each threshold is checked as written, a percentage of the total; the
// report prints every one and the breach names each breached one with
// its measured value.
func TestReportNamesEveryBreach(t *testing.T) {
	var f Flag
	f.Names = names
	for _, v := range []string{"rejected<1%,write_unknown==0", "accepted_per_second>50", "p99_ms<300"} {
		if err := f.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	figures := map[string]float64{"rejected": 1, "write_unknown": 0, "accepted_per_second": 49.9, "p99_ms": 300}
	var out bytes.Buffer
	err := Report(&out, "run", f.List, figures, Totals{Default: 200})
	var b *Breach
	if !errors.As(err, &b) || len(b.Breached) != 2 {
		t.Fatalf("%v", err)
	}
	want := "run: 2 of 4 thresholds breached: accepted_per_second>50: measured 49.9, BREACHED; p99_ms<300: measured 300, BREACHED"
	if err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	if !strings.Contains(out.String(), "threshold rejected<1%: measured 0.5% (1 of 200), held\n") || strings.Count(out.String(), "\n") != 4 {
		t.Errorf("printed:\n%s", out.String())
	}
	if err := Report(&out, "run", nil, figures, Totals{Default: 200}); err != nil {
		t.Errorf("no thresholds: %v", err)
	}
	// A percentage of nothing is 0.
	if o := Check([]Threshold{{Metric: "rejected", Op: "<", Value: 1, Percent: true}}, figures, Totals{}); !o[0].Held || o[0].Measured != 0 {
		t.Errorf("of no records: %+v", o[0])
	}
}

// A figure with a total of its own is a percentage of that: a
// dependency's rejections of its calls; "p.NAME" among the names stands
// for every p.x, and Each refuses an x the run has not.
func TestPercentagesOfTheirOwnTotal(t *testing.T) {
	f := Flag{Names: []string{"rejected", "rejected.NAME", "complete"}}
	if err := f.Set("rejected<1%,rejected.lookup<10%,complete>50%"); err != nil {
		t.Fatal(err)
	}
	figures := map[string]float64{"rejected": 175, "rejected.lookup": 175, "complete": 425}
	outs := Check(f.List, figures, Totals{Default: 600, Of: map[string]float64{"rejected": 1122, "rejected.lookup": 522}})
	if len(outs) != 3 || outs[0].Held || outs[1].Held || !outs[2].Held || outs[0].String() != "rejected<1%: measured 15.5971% (175 of 1122), BREACHED" ||
		outs[1].Of != 522 || outs[2].Of != 600 {
		t.Errorf("%v", outs)
	}
	if err := f.Each("rejected", []string{"lookup", "ledger"}); err != nil {
		t.Errorf("a dependency of the run refused: %v", err)
	}
	if err := f.Each("rejected", []string{"lookups", "ledger"}); err == nil || err.Error() != `"rejected.lookup<10%": no "lookup" to measure (did you mean rejected.lookups?); there are: lookups, ledger` {
		t.Errorf("an unknown one: %v", err)
	}
	if err := f.Set("rejected.<1%"); err == nil {
		t.Error("rejected. with no name accepted")
	}
}

func TestFigures(t *testing.T) {
	f := Figures(struct {
		A int     `json:"a"`
		B float64 `json:"b"`
		S string  `json:"s"`
		M map[string]int
	}{A: 2, B: 0.5})
	if len(f) != 2 || f["a"] != 2 || f["b"] != 0.5 {
		t.Errorf("%v", f)
	}
}
