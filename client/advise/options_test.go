package advise_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/client/advise"
	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/mockservice/field"
)

// writeProbes writes the lab's probes as loadlab probe --json files into
// dir and returns the options naming them.
func writeProbes(t *testing.T, dir string) advise.Options {
	t.Helper()
	o := advise.Options{Name: "advised"}
	for dep, c := range labProbes() {
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, dep+".json")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := o.AddProbe(dep + "=" + file); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// Execute reads the probes, advises, writes the file to Out and reports
// it; Print prints the file, a summary of the written file, or the JSON.
func TestExecute(t *testing.T) {
	dir := t.TempDir()
	o := writeProbes(t, dir)
	o.TargetRate = 150
	r, err := advise.Execute(o, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil || r.Advice.RecordsInFlight != 59 ||
		!strings.HasPrefix(string(r.File), "# Written by loadlab advise at 2026-01-02T03:04:05Z from the probes enrichment=") {
		t.Fatalf("%+v, %v\n%s", r.Advice, err, r.File)
	}
	var b strings.Builder
	if err := r.Print(&b); err != nil || b.String() != string(r.File) {
		t.Errorf("without --out, printed %q", b.String())
	}
	o.Out = filepath.Join(dir, "s.yaml")
	r, err = advise.Execute(o, time.Now())
	written, _ := os.ReadFile(o.Out)
	b.Reset()
	if err != nil || r.Print(&b) != nil || string(written) != string(r.File) ||
		!strings.HasPrefix(b.String(), "Wrote "+o.Out+": strategy advised, 59 records in flight, permits enrichment=64, records=6\n") ||
		!strings.Contains(b.String(), "\nWarning: enrichment: no knee up to 64") {
		t.Errorf("with --out: %v, printed %q", err, b.String())
	}
	o.JSON = true
	r, _ = advise.Execute(o, time.Now())
	b.Reset()
	var back advise.Advice
	if err := r.Print(&b); err != nil || json.Unmarshal([]byte(b.String()), &back) != nil || back.RecordsInFlight != 59 {
		t.Errorf("JSON: %v, %q", err, b.String())
	}
}

// Bad input names the option: the pipeline, the probes, one probe's file,
// the output file.
func TestExecuteNamesTheOption(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*advise.Options){
		"pipeline":          func(o *advise.Options) { o.Pipeline = filepath.Join(dir, "none.yaml") },
		"probes":            func(o *advise.Options) { o.Probes = nil },
		"probes.records":    func(o *advise.Options) { o.Probes["records"] = filepath.Join(dir, "none.json") },
		"probes.enrichment": func(o *advise.Options) { o.Probes["enrichment"] = bad },
		"out":               func(o *advise.Options) { o.Out = filepath.Join(dir, "no-such-dir", "s.yaml") },
	} {
		o := writeProbes(t, dir)
		change(&o)
		_, err := advise.Execute(o, time.Now())
		if fe, ok := field.Of(err); !ok || fe.Field != name {
			t.Errorf("%s: error %v, want one naming it", name, err)
		}
	}
	o := writeProbes(t, dir)
	o.TargetRate = -1
	if _, err := advise.Execute(o, time.Now()); err == nil || !strings.Contains(err.Error(), "target rate -1 must be ≥ 0") {
		t.Errorf("a negative target rate: %v", err)
	}
	for _, v := range []string{"enrichment", "=f", "enrichment=", "records=" + bad} {
		if err := o.AddProbe(v); err == nil {
			t.Errorf("probe %q accepted", v) // the last: records given twice
		}
	}
}

// A probe of the lab's pipeline under a misspelled name is told the name
// it is closest to, not to give a pipeline of its own.
func TestAMisspelledLabProbeIsNamed(t *testing.T) {
	probes := labProbes()
	probes["enrichmnt"] = probes["enrichment"]
	delete(probes, "enrichment")
	_, err := advise.Advise(pipeline.Lab(), probes, 0)
	if err == nil || !strings.Contains(err.Error(), "--probe enrichmnt=… (did you mean enrichment?) names none of them") || strings.Contains(err.Error(), "--pipeline FILE") {
		t.Errorf("got %v", err)
	}
}
