package mockservice

import (
	"net/http"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

func TestMillis(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0.000"}, {499 * time.Nanosecond, "0.000"}, {500 * time.Nanosecond, "0.001"},
		{12*time.Millisecond + 345*time.Microsecond, "12.345"}, {7 * time.Microsecond, "0.007"},
		{30*time.Microsecond + 600*time.Nanosecond, "0.031"}, {90 * time.Second, "90000.000"}, {-time.Second, "0.000"},
	} {
		if got := millis(tt.d); got != tt.want {
			t.Errorf("millis(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// answeredUnserved assigns the timing headers without canonicalising their
// names: they must be canonical already, or Header.Get would miss them.
func TestTimingHeaderNamesAreCanonical(t *testing.T) {
	for _, h := range []string{api.HeaderQueueWait, api.HeaderService} {
		if c := http.CanonicalHeaderKey(h); c != h {
			t.Errorf("%q is not canonical (%q)", h, c)
		}
	}
}
