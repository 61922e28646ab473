package replay

import (
	"cmp"
	"slices"
	"time"

	"github.com/loadlab/loadlab/mockservice/api"
)

// chainLinks are, for each request the client sent when a slot of its
// limit freed (the i-th in issue order, i ≥ limit, takes the slot of the
// (i−limit)-th outcome in time), the real time from the server's finish of
// the request answered then to the station's admission of the one sent;
// none where that request was not answered (the client gave up on it).
func chainLinks(rec record, byID map[string]api.RequestEntry, seed uint32, limit int) []time.Duration {
	n := len(rec.issue)
	byOutcome := make([]int, n)
	for i := range byOutcome {
		byOutcome[i] = i
	}
	slices.SortStableFunc(byOutcome, func(a, b int) int { return rec.outcome[a].Compare(rec.outcome[b]) })
	var links []time.Duration
	for i := limit; i < n; i++ {
		freed := byOutcome[i-limit]
		prev, next := byID[requestID(seed, freed)], byID[requestID(seed, i)]
		if rec.done[freed] && prev.Finished != nil {
			links = append(links, max(next.Arrived.Sub(*prev.Finished), 0))
		}
	}
	return links
}

// chainOverhead is the links' mean, and the sum of the chain longest
// (what one chain of that many links can have gathered at most), in ms.
func chainOverhead(links []time.Duration, chain int) (mean, most float64) {
	var sum time.Duration
	for _, l := range links {
		sum += l
	}
	sorted := slices.Clone(links)
	slices.SortFunc(sorted, func(a, b time.Duration) int { return cmp.Compare(b, a) })
	var top time.Duration
	for _, l := range sorted[:min(chain, len(sorted))] {
		top += l
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return ms(sum) / float64(len(links)), ms(top)
}
