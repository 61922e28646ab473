package mockservice_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/mockservice"
	"github.com/loadlab/loadlab/mockservice/api"
)

// With a slowdown, a service that starts with n in service takes its draw
// × the n-th factor (the last beyond the list), so four at once take 40,
// 60, 80 and 80 ms and one alone its 40; a factor below 1 speeds it up; a
// replayed time is served as given; the planned lab seconds are the
// slowed times.
func TestStationSlowdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		s := station(t, 4, 0, 40*ms, false, 0)
		if err := s.SetSlowdown([]float64{1, 1.5, 2}); err != nil {
			t.Fatal(err)
		}
		var got []time.Duration
		var all []<-chan mockservice.Result
		for range 4 {
			all = append(all, async(s, context.Background(), ""))
		}
		for _, c := range all {
			got = append(got, (<-c).Service)
		}
		slices.Sort(got)
		if want := []time.Duration{40 * ms, 60 * ms, 80 * ms, 80 * ms}; !slices.Equal(got, want) {
			t.Errorf("four at once served %v, want %v", got, want)
		}
		if r := s.Do(context.Background(), ""); r.Service != 40*ms {
			t.Errorf("one alone served %v, want 40ms", r.Service)
		}
		if r := s.DoFor(context.Background(), "", 10*ms, nil); r.Service != 10*ms {
			t.Errorf("a replayed 10ms served %v, want it as given", r.Service)
		}
		if st := s.Stats(); st.Draws != 6 || st.PlannedLabSeconds < 0.309999 || st.PlannedLabSeconds > 0.310001 {
			t.Errorf("%d draws, %v planned lab seconds; want 6 and 0.31", st.Draws, st.PlannedLabSeconds)
		}
		if err := s.SetSlowdown([]float64{0.5}); err != nil {
			t.Fatal(err)
		}
		if r := s.Do(context.Background(), ""); r.Service != 20*ms || r.Outcome != api.OutcomeServed {
			t.Errorf("sped up: %s in %v, want served in 20ms", r.Outcome, r.Service)
		}
		if err := s.SetSlowdown([]float64{1, 0}); err == nil || err.Error() != "records.slowdown[1]: 0 must be a number > 0" {
			t.Errorf("a zero factor: %v", err)
		}
	})
}
