package judge

import (
	"fmt"
	"maps"
	"slices"
	"strings"

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
// unresolved, which is a difference. The calls to realDeps, the
// dependencies without a copy, went to real services and are not
// compared: Partial says so.
func ReconcileCopies(c records.Result, s api.Stats, unknown resultsfile.Resolution, write string, realDeps []string) resultsfile.Reconciliation {
	r := resultsfile.Reconciliation{
		Client: resultsfile.ClientCount{WritesCreated: c.WritesCreated, WritesDuplicate: c.WritesDuplicate,
			WriteRejections: c.WriteRejections, WriteUnknown: c.WriteUnknown, CallsSent: map[string]int{},
			RetriedWritesUnanswered: c.RetriedWritesUnanswered},
		Server:                 resultsfile.ServerCount{RejectedWrites: refused(s.Stations[write]), Requests: map[string]int{}},
		WriteUnknownUnresolved: unknown.Unresolved,
	}
	differ := func(format string, a ...any) { r.Differences = append(r.Differences, fmt.Sprintf(format, a...)) }
	if len(realDeps) > 0 {
		r.Partial = fmt.Sprintf("the calls to %s went to real services, not copies: not reconciled", strings.Join(realDeps, ", "))
	}
	if c.WriteRejections != r.Server.RejectedWrites && !slices.Contains(realDeps, write) {
		differ("rejected writes: client %d, the copy of %s %d", c.WriteRejections, write, r.Server.RejectedWrites)
	}
	if unknown.Unresolved > 0 {
		differ("writes of unknown outcome: %d, which a copy (no store) cannot resolve", unknown.Unresolved)
	}
	deps := slices.Sorted(maps.Keys(s.Stations))
	for dep := range c.CallsSent {
		if _, ok := s.Stations[dep]; !ok && !slices.Contains(realDeps, dep) {
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
// the calls its copy refused; a real write's (realDeps: the dependencies
// without a copy) peak is not known.
func ownMetrics(m map[string]float64, c records.Result, s api.Stats, write string, realDeps []string) {
	delete(m, "stored_writes")
	delete(m, "peak_in_flight_enrichment")
	delete(m, "peak_in_flight_records")
	delete(m, "peak_concurrent_writes")
	if !slices.Contains(realDeps, write) {
		m["peak_concurrent_writes"] = float64(s.Stations[write].HighWater.Offered)
	}
	for _, dep := range realDeps {
		m["peak_in_flight_"+dep] = float64(c.PeakInFlight[dep])
	}
	for dep, st := range s.Stations {
		m["peak_in_flight_"+dep] = float64(c.PeakInFlight[dep])
		m[dep+"_refused"] = float64(refused(st))
	}
}
