package records

import (
	"strings"
	"testing"
)

// Record ids go into paths unescaped: a run id that is not URL-safe is
// refused before anything is sent.
func TestRunIDMustBeURLSafe(t *testing.T) {
	cfg := DefaultConfig()
	for _, id := range []string{"a b", "x/y", "q?", "h#", "20261201T070000.000-", "C4-slow-write-cpus-1-1-", "bounded:8-"} {
		cfg.RunID = id
		err := cfg.Validate()
		if safe := !strings.ContainsAny(id, " /?#"); (err == nil) != safe {
			t.Errorf("run id %q: %v", id, err)
		}
	}
}
