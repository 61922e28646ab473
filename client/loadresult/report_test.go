package loadresult_test

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/loadresult"
)

// A generator that could not keep its schedule says so, with the rate it
// reached and the rate it was scheduled to send.
func TestSaturationIsSaid(t *testing.T) {
	r := loadgen.Result{Scheduled: 1000, Requests: 900, Behind: 100, TimeScale: 0.5, Timeline: make([]loadgen.Second, 4)}
	r.MeasureSending()
	if got := loadresult.Saturation(r); !strings.Contains(got, "GENERATOR SATURATED: it sent 450 requests per real second of the 500 scheduled (10.0% behind") {
		t.Errorf("Saturation: %q", got)
	}
}
