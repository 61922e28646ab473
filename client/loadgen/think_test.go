package loadgen_test

import (
	"context"
	"testing"

	"github.com/loadlab/loadlab/client/loadgen"
)

// A closed user whose request is rejected, or dropped at the in-flight cap,
// waits at least one model second: with a think time of 0 it does not spin.
// Two users against one worker of 5 s and no queue: at most one try per
// user and second. (That the counts agree with the model's, which follows
// the same rule, is compare's TestThinkZeroAgreesWithTheModel.)
func TestThinkZeroDoesNotSpin(t *testing.T) {
	t.Parallel() // two users: light beside the real-time tests
	for _, think := range []int{0, 1} {
		sc, e := loadgen.OpeningRun()
		sc.Mode, sc.Users, sc.Think, sc.Duration = loadgen.Closed, 2, think, 30
		e.Workers, e.Queue, e.ServiceTime = 1, 0, 5
		const scale = 0.05
		m := startMock(t, endpoint(e, scale, loadgen.DefaultTieWindowStep))
		res, err := loadgen.Load(context.Background(), loadgen.Config{Target: m.url + "/enrich", Schedule: sc,
			Arrivals: loadgen.ArrivalsStep, TimeScale: scale, TieWindow: loadgen.DefaultTieWindowStep})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rejected == 0 || res.Requests > sc.Users*sc.Duration {
			t.Errorf("think %d: %d requests, %d rejected; want rejections and at most %d requests", think,
				res.Requests, res.Rejected, sc.Users*sc.Duration)
		}
		// Dropped at the cap: 4 users for one slot, at most one try per
		// user and second.
		sc.Users = 4
		sc.Duration = 20
		res, err = loadgen.Load(context.Background(), loadgen.Config{Target: m.url + "/enrich", Schedule: sc,
			Arrivals: loadgen.ArrivalsStep, TimeScale: scale, MaxInFlight: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Dropped == 0 || res.Dropped > sc.Users*sc.Duration {
			t.Errorf("think %d: %d dropped, want some and at most %d", think, res.Dropped, sc.Users*sc.Duration)
		}
	}
}
