package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loadlab/loadlab/client/probe"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/exptest"
	"github.com/loadlab/loadlab/experiments/resultsfile"
)

var committed = sync.OnceValues(func() (*resultsfile.Results, error) {
	return resultsfile.ReadResults("../exptest/testdata/range-v1/results.json")
})

// committedResults is the first results of the replication under the
// range-v1 rules (format 1: metrics kept, no raw data; the client's
// timelines left out of this copy), read once; each test gets its own copy of the verdicts to change.
func committedResults(t *testing.T) *resultsfile.Results {
	t.Helper()
	r, err := committed()
	if err != nil {
		t.Fatal(err)
	}
	c := *r
	c.Verdicts = slices.Clone(r.Verdicts)
	return &c
}

// The Markdown report of the committed first results is what was committed
// with them, but for the calibration section and the cells table's run
// columns added since: rendering moved, the report did not change.
func TestMarkdownOfTheCommittedResults(t *testing.T) {
	res := committedResults(t)
	want, err := os.ReadFile("../exptest/testdata/range-v1/report.md")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	WriteMarkdown(&got, res)
	// Since then the report gained, first, the answer (the verdict counts,
	// a line per verdict, the accepted rates' chart), and a section on the
	// time-scale calibration (those results have none); the rest is
	// unchanged.
	a := strings.Index(got.String(), "## The answer")
	c := strings.Index(got.String(), "## Time-scale calibration")
	b := strings.Index(got.String(), "## Accepted records per second")
	if a < 0 || c < a || b < c || !strings.Contains(got.String()[c:b], "not measured") {
		t.Fatalf("no answer, or no calibration section saying the bias was not measured:\n%s", got.String())
	}
	answer := got.String()[a:c]
	for _, want := range []string{"14 supported, 1 refuted, 0 inconclusive.", "| H10 | **refuted** |", "![Accepted records per lab second by strategy and scenario, cpus-1](accepted-cpus-1.svg)"} {
		if !strings.Contains(answer, want) {
			t.Errorf("the answer lacks %q:\n%s", want, answer)
		}
	}
	rest := got.String()[:a] + got.String()[b:]
	// The cells table now ends with valid runs of all and the excluded
	// ones, where it had a "failed runs" column (empty: none failed).
	cells := func(s string) (before, table, after string) {
		i := strings.Index(s, "## Every cell")
		j := strings.Index(s, "## Verdicts")
		if i < 0 || j < i {
			t.Fatalf("no cells section:\n%s", s)
		}
		return s[:i], s[i:j], s[j:]
	}
	// It now says what each strategy is, after the setup, and each test
	// names what it is taken of ("peak_records_in_flight − gomaxprocs ==
	// 0", where it said "== 0").
	strategies := "Strategies (call timeout 2s, permit timeout 10s for all): C1 — records in flight = GOMAXPROCS; no dependency limiter; "
	i := strings.Index(rest, strategies)
	if i < 0 || !strings.Contains(rest[i:], "C4 — 32 records in flight; enrichment 24 permits, records 6 permits") {
		t.Errorf("no strategies defined after the setup:\n%s", rest)
	} else {
		rest = rest[:i] + rest[i+strings.Index(rest[i:], "\n\n")+2:]
	}
	gb, gt, ga := cells(rest)
	wb, wt, wa := cells(string(want))
	ga, wa = withoutTests(t, ga, wa)
	if gb != wb || ga != wa {
		t.Errorf("report.md differs from the committed one outside the cells table:\n%s", rest)
	}
	gotRows, wantRows := strings.Split(gt, "\n"), strings.Split(wt, "\n")
	if len(gotRows) != len(wantRows) {
		t.Fatalf("cells table: %d lines, committed %d", len(gotRows), len(wantRows))
	}
	for i := range gotRows {
		g, w := gotRows[i], wantRows[i]
		switch {
		case strings.HasPrefix(g, "| C"):
			if !strings.HasSuffix(g, " | 5 of 5 | none |") || strings.TrimSuffix(g, "| 5 of 5 | none |") != strings.TrimSuffix(w, "|  |") {
				t.Errorf("cells row\n%s\ncommitted\n%s", g, w)
			}
		case strings.HasPrefix(g, "| cell"):
			if strings.Replace(g, "valid runs | excluded runs", "failed runs", 1) != w {
				t.Errorf("cells head\n%s\ncommitted\n%s", g, w)
			}
		case strings.HasPrefix(g, "| ---"):
			if strings.TrimSuffix(g, " --- |") != w {
				t.Errorf("cells rule %q, committed %q", g, w)
			}
		case g != w:
			t.Errorf("cells section %q, committed %q", g, w)
		}
	}
}

// The HTML report is rendered from the results by html/template: text from
// the files is escaped, the verdict carries its class, every table is there.
func TestHTMLEscapesAndMarksVerdicts(t *testing.T) {
	res := committedResults(t)
	res.Verdicts[0].Claim = `C4 <script>alert("x")</script> & more`
	var page bytes.Buffer
	if err := WriteHTML(&page, res); err != nil {
		t.Fatal(err)
	}
	s := page.String()
	if strings.Contains(s, "<script>") || !strings.Contains(s, "&lt;script&gt;") {
		t.Error("a claim's markup was not escaped")
	}
	if n := strings.Count(s, `<td class="refuted">refuted</td>`); n != 2 {
		t.Errorf("%d refuted verdict cells, want 2 (H10, in the answer and in detail)", n)
	}
	if n := strings.Count(s, "<table>"); n != len(res.Experiment.CPUs)+4 {
		t.Errorf("%d tables, want the answer's, one per CPU setting, the verdicts in detail and the cells in two", n)
	}
	// The lab's two figures, and accepted rates, 503s and peak writes for
	// cpus-1: cpus-2 and cpuset-1 have one strategy each (C1), whose bars
	// would say what the tables say.
	if n := strings.Count(s, "<svg"); n != 5 {
		t.Errorf("%d charts, want 5", n)
	}
	if a, v := strings.Index(s, "<svg"), strings.Index(s, "<h2>How it ran</h2>"); a < 0 || a > v {
		t.Error("the report does not open with the answer's charts")
	}
}

// Exploratory verdicts are reported as computed, not as findings: the
// report says how the run differs from the locked design, labels each,
// and counts none.
func TestExploratoryVerdictsAreNotFindings(t *testing.T) {
	spec, err := design.LoadSpec(exptest.WriteFile(t, t.TempDir(), "spec.yaml", exptest.TinySpec))
	if err != nil {
		t.Fatal(err)
	}
	why := "not the preregistered design: runs 4, locked 3"
	res := &resultsfile.Results{Experiment: spec, Verdicts: []resultsfile.Verdict{{ID: "T1", Verdict: resultsfile.Refuted, Exploratory: why}}}
	var md strings.Builder
	WriteMarkdown(&md, res)
	for _, s := range []string{"**Exploratory: " + why, "exploratory: **refuted**", "No findings: every verdict is exploratory"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, md.String())
		}
	}
	if strings.Contains(md.String(), "0 supported, 1 refuted, 0 inconclusive.\n") {
		t.Error("an exploratory refutation is counted as a finding")
	}
}

// The reports come with the answer as image files, one per CPU setting,
// to show elsewhere (the README shows the replication's).
func TestWriteReportsWritesTheAnswer(t *testing.T) {
	res := committedResults(t)
	dir := t.TempDir()
	if err := WriteReports(dir, res); err != nil {
		t.Fatal(err)
	}
	// cpus-1 has five strategies; cpus-2 and cpuset-1 only C1, whose one
	// bar per scenario would say what a table says.
	for _, f := range []struct {
		name, title string
		want        bool
	}{{"accepted-cpus-1.svg", "Accepted records per lab second, cpus-1", true}, {"rejected-cpus-1.svg", "Write 503s per run, cpus-1", true},
		{"accepted-cpus-2.svg", "", false}, {"accepted-cpuset-1.svg", "", false}} {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if f.want && (err != nil || !bytes.HasPrefix(b, []byte("<svg")) || !bytes.Contains(b, []byte(f.title))) {
			t.Errorf("%s: %v, %.60q", f.name, err, b)
		}
		if !f.want && err == nil {
			t.Errorf("%s written: a chart of one strategy", f.name)
		}
	}
}

// A terminal gets the answer, not the report: the runs that counted, the
// accepted rates, a line per verdict and the counts, in a screenful.
func TestSummaryLeadsWithTheAnswer(t *testing.T) {
	res, err := resultsfile.ReadResults("../results/replication-v4/results.json")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteSummary(&b, res)
	out := b.String()
	for _, want := range []string{
		"Experiment \"replication\": 90 of 90 runs valid (reconciled with the server), 18 cells\n",
		"Accepted records per lab second, cpus-1 (median, min–max):",
		"| advised | 127.77 (113.14–131.48) | 12.38 (11.76–12.87) | 35.17 (34.72–35.45) |",
		"  H10  inconclusive Under slow writes C4's accepted records/s is not below C3's. (holds across the bias)\n",
		"\n19 supported, 0 refuted, 2 inconclusive.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n > 60 || strings.Contains(out, "## Every cell") {
		t.Errorf("%d lines, or the whole report:\n%s", n, out)
	}
}

// withoutTests takes the test column out of both verdict tables, after
// checking that each test of got ends with the committed one and names
// what it is taken of before it.
func withoutTests(t *testing.T, got, want string) (string, string) {
	t.Helper()
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	if len(g) != len(w) {
		return got, want
	}
	for i := range g {
		gc, wc := strings.Split(g[i], " | "), strings.Split(w[i], " | ")
		if len(gc) < 5 || len(gc) != len(wc) || !strings.HasPrefix(g[i], "| H") {
			continue
		}
		if !strings.HasSuffix(gc[3], " "+wc[3]) || len(gc[3]) <= len(wc[3])+1 {
			t.Errorf("test %q does not name what %q is taken of", gc[3], wc[3])
		}
		gc[3], wc[3] = "", ""
		g[i], w[i] = strings.Join(gc, " | "), strings.Join(wc, " | ")
	}
	return strings.Join(g, "\n"), strings.Join(w, "\n")
}

// The advised strategies of the committed replication say what a knee
// counts, in the Markdown and the HTML, beside the row it explains: the
// slow-enrichment scenario's system of record, 6 workers and 6 queue
// slots (its first rejection at 13), has its knee at 7, a worker above
// its workers, since the client counts the calls whose answers are still
// on their way back.
func TestAdvisedTableSaysWhatAKneeCounts(t *testing.T) {
	res, err := resultsfile.ReadResults("../results/replication-v4/results.json")
	if err != nil {
		t.Fatal(err)
	}
	var md, html bytes.Buffer
	WriteMarkdown(&md, res)
	if err := WriteHTML(&html, res); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	i := strings.Index(out, "## Advised strategies")
	j := strings.Index(out[max(i, 0):], "\n## ")
	if i < 0 || j < 0 {
		t.Fatalf("no advised strategies section:\n%s", out)
	}
	section := out[i : i+j]
	says := []string{fmt.Sprintf("The knee is the smallest concurrency probed whose successes per second reach %.0f%% of the plateau.", 100*probe.KneeFraction),
		"It counts calls in flight at the client, network round trips included, so where the service queues, " +
			"a knee at or a little above its workers is the concurrency that keeps every worker busy while answers travel back."}
	for _, want := range append(says, "| slow-enrichment | records | 0.03453 | 7 | 13 | 7 (the knee) |") {
		if !strings.Contains(section, want) {
			t.Errorf("the advised section lacks %q:\n%s", want, section)
		}
	}
	for _, want := range says {
		if !strings.Contains(html.String(), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
}
