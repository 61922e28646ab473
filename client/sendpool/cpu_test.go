package sendpool

import (
	"testing"
	"time"
)

// A gauge fed 10 ms windows whose load alternates between 0.6 and 1.0 of
// one core (a mean of 0.8, as a generator at 40,000 requests/s reads):
// once past its first windows it says busy throughout, where one window's
// reading would say not busy every other window. A process using a fifth
// of its cores has CPU to spare; none is said before a window is measured.
func TestTheCPUGaugeSmoothsItsWindows(t *testing.T) {
	var c cpuGauge
	if c.spare() || c.full {
		t.Fatalf("before any window: spare %v, full %v", c.spare(), c.full)
	}
	at := time.Unix(0, 0)
	var used time.Duration
	c.measure(at, used, 1)
	var notBusy []int
	for i := range 40 {
		load := 0.6
		if i%2 == 1 {
			load = 1.0
		}
		at = at.Add(cpuWindow)
		used += time.Duration(load * float64(cpuWindow))
		c.measure(at, used, 1)
		if i >= 10 && !c.full {
			notBusy = append(notBusy, i)
		}
	}
	if len(notBusy) > 0 || c.load < 0.7 || c.load > 0.9 {
		t.Errorf("windows %v not busy; load %.2f, want busy throughout at about 0.8", notBusy, c.load)
	}
	if c.spare() {
		t.Error("spare at 0.8 of its CPU")
	}
	for range 40 { // a fifth of two cores
		at = at.Add(cpuWindow)
		used += time.Duration(0.4 * float64(cpuWindow))
		c.measure(at, used, 2)
	}
	if !c.spare() || c.full {
		t.Errorf("at a fifth of its CPU: load %.2f, spare %v, full %v; want spare, not full", c.load, c.spare(), c.full)
	}
}
