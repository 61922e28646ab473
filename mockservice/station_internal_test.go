package mockservice

import (
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
	"github.com/loadlab/loadlab/mockservice/latency"
)

// A station that releases a worker it does not hold has lost count of its
// workers: it panics with a message rather than serving on wrong figures.
func TestReleasingMoreThanHeldPanics(t *testing.T) {
	s, err := NewStation(api.Records, config.Station{Workers: 1, Queue: 0, RejectStatus: 503}, latency.Fixed{D: time.Millisecond}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "released more workers than it holds") {
			t.Errorf("recovered %q, want the station's own panic", msg)
		}
	}()
	now := time.Now()
	s.release(now, now)
}
