package records_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/client/records"
)

// The headline says how many records were accepted of how many, so that a
// run whose writes were mostly refused does not read as a fast one; at
// time scale 1 (one's own services) it speaks of seconds, not lab seconds.
func TestHeadlineSaysAcceptedOfAll(t *testing.T) {
	for _, tt := range []struct {
		scale float64
		want  string
	}{
		{1, "Accepted 20 of 1000 records (2%: 17 complete, 3 incomplete) in 0.22 s: 92.04 records per second\n"},
		{0.1, "Accepted 20 of 1000 records (2%: 17 complete, 3 incomplete) in 0.22 real s = 2.17 lab s (time scale 0.1): 9.20 records per lab second (92.04 per real second)\n"},
	} {
		r := records.Result{Strategy: "C2", Records: 1000, Complete: 17, Incomplete: 3, WriteRejected: 980, DurationSeconds: 0.2173,
			AcceptedPerRealSecond: 92.04, AcceptedPerLabSecond: 92.04 * tt.scale, TimeScale: tt.scale}
		var b bytes.Buffer
		if err := records.WriteResult(&b, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tt.want) || (tt.scale == 1 && strings.Contains(b.String(), "lab s")) {
			t.Errorf("time scale %g:\n%s\nwant %q", tt.scale, b.String(), tt.want)
		}
	}
}
