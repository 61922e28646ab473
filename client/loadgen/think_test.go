package loadgen_test

import (
	"context"
	"testing"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/experiments/models"
)

// A closed user whose request is rejected, or dropped at the in-flight cap,
// waits at least one model second: with a think time of 0 it does not spin.
// The real run agrees with the model, which follows the same rule (over 60
// s at think 0: 71 requests, 11 on time, 59 rejected; before the rule the
// model counted 13 and the generator spun).
func TestThinkZeroDoesNotSpin(t *testing.T) {
	t.Parallel() // two users: light beside TestLoadAgreesWithTheModel
	for _, think := range []int{0, 1} {
		sc := models.DefaultAdmissionScenario()
		sc.Generator, sc.Users, sc.Workers, sc.Queue, sc.ServiceTime, sc.Think = models.GeneratorClosed, 2, 1, 0, 5, think
		sc.Duration = 30
		const scale = 0.05
		m := startMock(t, endpoint(sc, scale, loadgen.DefaultTieWindowStep))
		res, err := loadgen.Load(context.Background(), loadgen.Config{Target: m.url + "/enrich", Scenario: sc,
			Arrivals: loadgen.ArrivalsStep, TimeScale: scale, TieWindow: loadgen.DefaultTieWindowStep})
		if err != nil {
			t.Fatal(err)
		}
		model, err := models.SimulateAdmission(sc)
		if err != nil {
			t.Fatal(err)
		}
		// One request of slack: at the run's edges a real second is not a
		// model step.
		for _, c := range [][2]int{{res.Requests, model.Requests}, {res.OnTime, model.OnTime}, {res.Rejected, model.Rejected}} {
			if d := c[0] - c[1]; d < -1 || d > 1 {
				t.Errorf("think %d: real %d requests (%d on time, %d rejected), model %d (%d, %d)", think,
					res.Requests, res.OnTime, res.Rejected, model.Requests, model.OnTime, model.Rejected)
				break
			}
		}
		// Dropped at the cap: 4 users for one slot, at most one try per
		// user and second.
		sc.Users = 4
		sc.Duration = 20
		res, err = loadgen.Load(context.Background(), loadgen.Config{Target: m.url + "/enrich", Scenario: sc,
			Arrivals: loadgen.ArrivalsStep, TimeScale: scale, MaxInFlight: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Dropped == 0 || res.Dropped > sc.Users*sc.Duration {
			t.Errorf("think %d: %d dropped, want some and at most %d", think, res.Dropped, sc.Users*sc.Duration)
		}
	}
}
