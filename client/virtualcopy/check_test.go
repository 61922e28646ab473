package virtualcopy_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/client/virtualcopy"
)

// A probe beside itself is faithful figure by figure; a plateau 15% off,
// or a knee one off, is not, and the table says which.
func TestCompareSaysWhatDiffers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := probed(t, station(3, 1, 40*time.Millisecond, 503, ""), 8)
		var b strings.Builder
		if n, err := virtualcopy.WriteComparison(&b, "ledger", virtualcopy.Compare(r, r)); err != nil || n != 0 {
			t.Errorf("itself: %d unfaithful, %v:\n%s", n, err, b.String())
		}
		off := r
		off.PlateauPerSecond *= 1.15
		k := *r.Knee + 1
		off.Knee = &k
		b.Reset()
		n, _ := virtualcopy.WriteComparison(&b, "ledger", virtualcopy.Compare(r, off))
		out := b.String()
		if n != 2 || strings.Count(out, "DIFFERS") != 2 || !strings.Contains(out, "(+15.0%)") || !strings.Contains(out, "service time p50 (ms)") {
			t.Errorf("%d unfaithful:\n%s", n, out)
		}
	})
}
