package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/experiments/exptest"
)

// The own-services path end to end: --init writes a starter experiment
// from a pipeline and its probes; edited and locked, it runs every cell
// against virtual copies, every run valid, its claims on refusals
// supported, and check recomputes its verdicts from the folder alone.
func TestOwnServicesFromInitToCheck(t *testing.T) {
	dir := exptest.OwnServices(t, t.TempDir())
	exp, hyp, out := filepath.Join(dir, "experiment.yaml"), filepath.Join(dir, "hypotheses.yaml"), filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"experiment", "--init", "--pipeline", filepath.Join(dir, "shop.yaml"), "--file", exp, "--hypotheses", hyp,
		"--probe", "stock=" + filepath.Join(dir, "stock.json"), "--probe", "orders=" + filepath.Join(dir, "orders.json")}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "loadlab preregister --file "+exp) {
		t.Fatalf("--init: exit %d: %s%s", code, stdout.String(), stderr.String())
	}
	if text, _ := os.ReadFile(exp); !strings.Contains(string(text), "pipeline: 'shop.yaml'") || !strings.Contains(string(text), "orders: {probe: 'orders.json'}") {
		t.Errorf("the starter names its files other than relative to itself:\n%s", text)
	}
	if code := run([]string{"experiment", "--init", "--pipeline", filepath.Join(dir, "shop.yaml"), "--file", exp, "--hypotheses", hyp,
		"--probe", "stock=" + filepath.Join(dir, "stock.json"), "--probe", "orders=" + filepath.Join(dir, "orders.json")}, &stdout, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "exists") {
		t.Errorf("--init over its own files: exit %d: %s", code, stderr.String())
	}
	// Edited as a user would, to a small design whose figures are counts
	// (a call timeout no stall beside other tests reaches, probe steps of
	// half a real second, two scenarios, claims that budgets keep: whether
	// C2's 20 records overflow the orders copy is how fast a starved
	// child sends them).
	text, err := os.ReadFile(exp)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.NewReplacer("records: 200", "records: 20", "runs: 5", "runs: 3", "call_timeout: 2s", "call_timeout: 200s",
		"permit_timeout: 10s", "permit_timeout: 100s", "step: 2s", "step: 5s",
		"  - name: slow-stock\n    stock: {service_time: 3}\n  - name: half-rate-stock\n    stock: {rate: 0.5}\n  - name: slow-orders\n    orders: {service_time: 3}\n", "").Replace(string(text))
	if !strings.Contains(edited, "runs: 3") || !strings.Contains(edited, "call_timeout: 200s") || strings.Contains(edited, "slow-stock") {
		t.Fatalf("the starter is not as this test edits it:\n%s", text)
	}
	writeFile(t, exp, edited)
	writeFile(t, hyp, "rules: paired-v3\nhypotheses:\n"+
		"  - {id: A1, claim: c, source: s, metric: write_rejections, cell: {strategy: advised, scenario: as-probed, cpu: cpus-1}, op: \"==\", threshold: 0}\n"+
		"  - {id: A2, claim: c, source: s, metric: write_rejections, cell: {strategy: advised, scenario: half-orders, cpu: cpus-1}, op: \"==\", threshold: 0}\n")
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"preregister", "--file", exp, "--hypotheses", hyp}, &stdout, &stderr); code != 0 {
		t.Fatalf("preregister: exit %d: %s", code, stderr.String())
	}
	if code := run([]string{"experiment", "--file", exp, "--hypotheses", hyp, "--target", "http://127.0.0.1:9"}, &stdout, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "runs against virtual copies") {
		t.Errorf("--target: exit %d: %s", code, stderr.String())
	}
	// A child, whose runs' children are the test binary as loadlab.
	cmd, cout, cerr := startChild(t, "experiment", "--file", exp, "--hypotheses", hyp, "--out", out)
	if err := cmd.Wait(); err != nil || !strings.Contains(cout.String(), "12 of 12 runs valid (reconciled with the virtual copies' counts), 4 cells") ||
		!strings.Contains(cout.String(), "2 supported, 0 refuted, 0 inconclusive") {
		t.Fatalf("experiment: %v:\n%s%s", err, cout.String(), cerr.String())
	}
	stdout.Reset()
	if code := run([]string{"check", out}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "all match the stored ones") {
		t.Errorf("check: exit %d: %s%s", code, stdout.String(), stderr.String())
	}
}
