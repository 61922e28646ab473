package field

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"records", "records-in-flight", "run-id", "strategy", "strategy-file", "time-scale"}
	for in, want := range map[string]string{"recods": "records", "strategyfile": "strategy-file", "time-scal": "time-scale",
		"runid": "run-id", "x": "", "duration": "", "recordsinflight": "records-in-flight"} {
		if got := Closest(in, names); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
