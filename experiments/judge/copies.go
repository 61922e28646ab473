package judge

import (
	"fmt"
	"maps"
	"slices"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
)

// served is every request a station of a virtual copy counted: those its
// station ended in any outcome and those its token bucket refused.
func served(st api.StationStats) int {
	n := st.RateLimited
	for _, o := range api.Outcomes {
		n += st.Requests[o]
	}
	return int(n)
}

// refused is a copy's refusals: its station's and its token bucket's.
func refused(st api.StationStats) int {
	return int(st.Requests[api.OutcomeRejected] + st.RateLimited)
}

// ReconcileCopies compares the client's result with the virtual copies'
// quiet counts (s: each copy's station under its dependency's name; write
// the write's): every dependency's calls sent against the requests its
// copy counted, and the writes refused against the write copy's
// refusals. Copies keep no store, so a write of unknown outcome stays
// unresolved, which is a difference.
func ReconcileCopies(c records.Result, s api.Stats, unknown resultsfile.Resolution, write string) resultsfile.Reconciliation {
	r := resultsfile.Reconciliation{
		Client: resultsfile.ClientCount{WritesCreated: c.WritesCreated, WritesDuplicate: c.WritesDuplicate,
			WriteRejections: c.WriteRejections, WriteUnknown: c.WriteUnknown, CallsSent: map[string]int{},
			RetriedWritesUnanswered: c.RetriedWritesUnanswered},
		Server:                 resultsfile.ServerCount{RejectedWrites: refused(s.Stations[write]), Requests: map[string]int{}},
		WriteUnknownUnresolved: unknown.Unresolved,
	}
	differ := func(format string, a ...any) { r.Differences = append(r.Differences, fmt.Sprintf(format, a...)) }
	if c.WriteRejections != r.Server.RejectedWrites {
		differ("rejected writes: client %d, the copy of %s %d", c.WriteRejections, write, r.Server.RejectedWrites)
	}
	if unknown.Unresolved > 0 {
		differ("writes of unknown outcome: %d, which a copy (no store) cannot resolve", unknown.Unresolved)
	}
	deps := slices.Sorted(maps.Keys(s.Stations))
	for dep := range c.CallsSent {
		if _, ok := s.Stations[dep]; !ok {
			deps = append(deps, dep)
		}
	}
	for _, dep := range deps {
		n := served(s.Stations[dep])
		r.Server.Requests[dep], r.Client.CallsSent[dep] = n, c.CallsSent[dep]
		if c.CallsSent[dep] != n {
			differ("%s calls: client sent %d, its copy counted %d", dep, c.CallsSent[dep], n)
		}
	}
	return r
}

// ownMetrics replaces in m the metrics the lab's stations name with the
// copies' (write: the write's dependency): the peak of concurrent writes
// the write's copy was offered, the stored writes (none: copies keep no
// store), and by dependency the peak calls in flight at the client and
// the calls its copy refused.
func ownMetrics(m map[string]float64, c records.Result, s api.Stats, write string) {
	delete(m, "stored_writes")
	delete(m, "peak_in_flight_enrichment")
	delete(m, "peak_in_flight_records")
	m["peak_concurrent_writes"] = float64(s.Stations[write].HighWater.Offered)
	for dep, st := range s.Stations {
		m["peak_in_flight_"+dep] = float64(c.PeakInFlight[dep])
		m[dep+"_refused"] = float64(refused(st))
	}
}
