package replay

import (
	"slices"
	"testing"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

// Two workers, requests of 100 ms: the first is served 30 ms too long (a
// stall), the second on time; the third and fourth wait in the queue and
// start when those finish, the third inheriting the stall; the fifth
// arrives after every worker has freed and starts on arrival, 2 ms after
// its issue. Each is behind the model's timeline by what it overran,
// waited for after a worker freed, or inherited.
func TestLatenessFollowsTheWorkerThatFreed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) *time.Time { v := t0.Add(time.Duration(ms) * time.Millisecond); return &v }
	entry := func(arrived, started, finished int) api.RequestEntry {
		return api.RequestEntry{Arrived: *at(arrived), Started: at(started), Finished: at(finished)}
	}
	issue := []time.Time{*at(0), *at(0), *at(0), *at(0), *at(500)}
	entries := []api.RequestEntry{
		entry(1, 1, 131),   // 1 ms to admission, 30 ms overrun
		entry(1, 1, 101),   // 1 ms to admission
		entry(1, 132, 232), // waited for the first; 1 ms dispatch
		entry(1, 101, 201), // waited for the second
		entry(502, 502, 602),
	}
	durs := slices.Repeat([]time.Duration{100 * time.Millisecond}, 5)
	got := lateness(issue, entries, durs)
	want := []time.Duration{31, 1, 32, 1, 2}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(got, want) {
		t.Errorf("lateness %v, want %v", got, want)
	}
}
