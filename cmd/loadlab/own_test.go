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
// from a pipeline and its probes; locked, it runs every cell against
// virtual copies (an exploratory three runs of 20 records), every run
// valid, and check recomputes its verdicts from the folder alone.
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
	cmd, cout, cerr := startChild(t, "experiment", "--file", exp, "--hypotheses", hyp, "--out", out, "--runs", "3", "--records", "20", "--calibration-runs", "0")
	if err := cmd.Wait(); err != nil || !strings.Contains(cout.String(), "30 of 30 runs valid (reconciled with the virtual copies' counts), 10 cells") {
		t.Fatalf("experiment: %v:\n%s%s", err, cout.String(), cerr.String())
	}
	stdout.Reset()
	if code := run([]string{"check", out}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "all match the stored ones") {
		t.Errorf("check: exit %d: %s%s", code, stdout.String(), stderr.String())
	}
}
