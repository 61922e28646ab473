package runner

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// resolveUnknown asks the system of record about every write whose outcome
// the client did not know.
func resolveUnknown(ctx context.Context, mock api.Client, c records.Result) resultsfile.Resolution {
	var res resultsfile.Resolution
	res.Unresolved = c.WriteUnknown - len(c.UnknownWrites) // not listed by the client
	for _, id := range c.UnknownWrites {
		_, ok, err := mock.Record(ctx, id)
		switch {
		case err != nil:
			res.Unresolved++
		case ok:
			res.Stored++
		default:
			res.Absent++
		}
	}
	return res
}

// statser is what waitQuiet asks: a mock service (api.Client), or a set
// of virtual copies.
type statser interface {
	Stats(ctx context.Context) (api.Stats, error)
}

// quietPoll is how often waitQuiet looks.
const quietPoll = 5 * time.Millisecond

// waitQuiet waits, up to limit, until neither station has a busy worker, a
// queued request or an open request.
func waitQuiet(ctx context.Context, mock statser, limit time.Duration) resultsfile.Quiet {
	q := resultsfile.Quiet{Limit: limit.Seconds()}
	start := time.Now()
	for {
		st, err := mock.Stats(ctx)
		q.Waited = time.Since(start).Seconds()
		if err != nil {
			q.Error = err.Error()
			return q
		}
		q.Busy, q.Queued, q.Open = map[string]int{}, map[string]int{}, map[string]int{}
		q.Quiet = true
		for _, name := range slices.Sorted(maps.Keys(st.Stations)) {
			s := st.Stations[name]
			q.Busy[name], q.Queued[name], q.Open[name] = s.Busy, s.QueueLength, s.Offered
			if s.Busy != 0 || s.QueueLength != 0 || s.Offered != 0 {
				q.Quiet = false
			}
		}
		if q.Quiet {
			q.Busy, q.Queued, q.Open = nil, nil, nil
			return q
		}
		if time.Since(start) >= limit || ctx.Err() != nil {
			return q
		}
		time.Sleep(quietPoll)
	}
}

// quietLimit is how long the runner waits for quiet: three times the
// longest service time or hang any profile configures, in lab seconds,
// at the time scale (and at least a second, for the round trips).
func quietLimit(cfg config.Config, scale float64) time.Duration {
	var longest time.Duration
	for _, p := range cfg.Profiles {
		longest = max(longest, p.Enrichment.Longest(), p.Records.Longest())
	}
	return max(time.Duration(3*float64(longest)*scale), time.Second)
}
