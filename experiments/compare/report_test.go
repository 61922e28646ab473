package compare

import (
	"bytes"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/experiments/models"
)

// The models' reports print the published figures as the documents do.
func TestReportsPrintThePublishedFigures(t *testing.T) {
	sc := models.DefaultConcurrencyScenario()
	rep, err := models.SimulateConcurrency(sc)
	if err != nil {
		t.Fatal(err)
	}
	if got := secs(rep.Strategies[0].Median.ClientOutcomeMs); got != "11.518 s" {
		t.Errorf("sequential prints as %q, want 11.518 s", got)
	}
	var b bytes.Buffer
	if err := WriteConcurrencyTable(&b, sc, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Scenario SHA-256: " + sc.SHA256(), "11.518 s", "1.188 s", "46 / 48",
		"Durations: 75% from 80 through 240 ms, 20% from 241 through 500 ms, 5% from 800 through 1200 ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("concurrency table lacks %q:\n%s", want, b.String())
		}
	}
	as := models.DefaultAdmissionScenario()
	as.Queue = 50
	r, err := models.SimulateAdmission(as)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := WriteAdmission(&b, as, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Scenario: open generator, 2/s, 8/s from 10 s to 40 s", "8 workers × 2 s service (4 requests/s), queue 50",
		"on time 96, rejected 70, served too late 116", "wasted worker-seconds 232", "One column per second", "too late "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("admission report lacks %q:\n%s", want, b.String())
		}
	}
}
