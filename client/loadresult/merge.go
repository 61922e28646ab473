// Package loadresult is what is done with a load's results once
// loadgen.Load has them: the segments of one schedule merged into the
// whole's result, the result written for people (its outcomes, figures and
// a text chart over time), and the figures a threshold can name.
package loadresult

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/client/loadgen"
)

// Merge combines the results of the n segments of one schedule (each
// loadgen.Load with Config.Segment i/n, the same scenario, arrivals, time
// scale, target and StartAt) into the result of the whole: every count, outcome,
// status code and timeline second summed, latency percentiles recomputed
// from the merged histograms. What only the shared station can say (the
// queue's samples, peak, full and empty times) is segment 0's, which reset
// it; QueueHighWater is the largest of the segments' readings of the
// station's mark. It refuses, naming them, results that are not segments,
// segments of different splits, schedules, targets or starts, a segment
// missing or given twice, and a partial (interrupted) segment. It is a pure
// function.
func Merge(segments []loadgen.Result) (loadgen.Result, error) {
	ordered, err := orderSegments(segments)
	if err != nil {
		return loadgen.Result{}, &MergeError{Err: err}
	}
	for _, r := range ordered {
		if err := checkSegment(ordered[0], r); err != nil {
			return loadgen.Result{}, &MergeError{Err: err}
		}
	}
	mg := newMerger(ordered[0], len(ordered))
	for _, r := range ordered {
		mg.add(r)
	}
	m := mg.result()
	m.MeasureSending()
	if err := check(m); err != nil { // sums of sound segments: cannot happen
		return loadgen.Result{}, &MergeError{Err: fmt.Errorf("the merged result %w", err)}
	}
	return m, nil
}

// ErrNotSegment: a result that does not say which segment of which
// schedule it is.
var ErrNotSegment = errors.New("not a segment's result")

// MergeError is why segments do not merge.
type MergeError struct{ Err error }

func (e *MergeError) Error() string { return "loadresult: merge: " + e.Err.Error() }

func (e *MergeError) Unwrap() error { return e.Err }

// orderSegments returns the segments of one split in index order, or says
// why they are not: not segments, of different splits, invalid, one given
// twice or missing.
func orderSegments(segments []loadgen.Result) ([]loadgen.Result, error) {
	if len(segments) == 0 {
		return nil, errors.New("no segments")
	}
	for i, r := range segments {
		if r.Segment == nil {
			return nil, fmt.Errorf("result %d of %d is not a segment (the result of a whole run, or of a merge)", i+1, len(segments))
		}
	}
	n := segments[0].Segment.Count
	at := map[int]int{} // segment index → position in segments
	for i, r := range segments {
		s := *r.Segment
		if s.Count != n {
			return nil, fmt.Errorf("segment %s and segment %s are of different splits (%d and %d segments)",
				segments[0].Segment, s, n, s.Count)
		}
		if err := s.Validate(); err != nil || s == (loadgen.Segment{}) {
			return nil, fmt.Errorf("result %d is not a valid segment: %s", i+1, s)
		}
		if j, dup := at[s.Index]; dup {
			return nil, fmt.Errorf("segment %s is given twice (results %d and %d)", s, j+1, i+1)
		}
		at[s.Index] = i
	}
	var missing []string
	for k := range n {
		if _, ok := at[k]; !ok {
			missing = append(missing, loadgen.Segment{Index: k, Count: n}.String())
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("segment %s missing: the %d segments together are the schedule", strings.Join(missing, ", "), n)
	}
	ordered := make([]loadgen.Result, n)
	for k, i := range at {
		ordered[k] = segments[i]
	}
	return ordered, nil
}

// merger adds up sound segments of one run, segment 0 first.
type merger struct {
	m                      loadgen.Result
	s0                     loadgen.Result
	fromSchedule, fromSend *hdrhistogram.Histogram
	clients, logErrors     []string
}

// newMerger starts the merge of n segments from segment 0's run and its
// station's figures.
func newMerger(s0 loadgen.Result, n int) *merger {
	return &merger{s0: s0, fromSchedule: loadgen.NewLatencyHistogram(), fromSend: loadgen.NewLatencyHistogram(),
		m: loadgen.Result{MergedSegments: n, Scenario: s0.Scenario, Arrivals: s0.Arrivals, Target: s0.Target, StartAt: s0.StartAt,
			TimeScale: s0.TimeScale, TieWindowS: s0.TieWindowS, StatusCodes: map[int]int{}, ServerJoined: true, ServerIdentified: true,
			PeakQueue: s0.PeakQueue, QueueEmptyAtS: clonePtr(s0.QueueEmptyAtS), QueueFullAtS: clonePtr(s0.QueueFullAtS),
			Timeline: make([]loadgen.Second, len(s0.Timeline))}}
}

// add adds segment r's counts, timeline and latencies.
func (mg *merger) add(r loadgen.Result) {
	m := &mg.m
	m.Requests += r.Requests
	m.OnTime += r.OnTime
	m.Rejected += r.Rejected
	m.TooLate += r.TooLate
	m.Unfinished += r.Unfinished
	m.Cancelled += r.Cancelled
	m.TimedOut += r.TimedOut
	m.Unjoined += r.Unjoined
	m.ErrorStatus += r.ErrorStatus
	m.TransportErrors += r.TransportErrors
	m.Scheduled += r.Scheduled
	m.Dropped += r.Dropped
	m.Behind += r.Behind
	m.LateStarts += r.LateStarts
	m.WastedWorkerS += r.WastedWorkerS
	m.MaxInFlight += r.MaxInFlight
	m.Senders += r.Senders
	m.MaxSendLagMs = max(m.MaxSendLagMs, r.MaxSendLagMs)
	m.ServerJoined = m.ServerJoined && r.ServerJoined
	m.ServerIdentified = m.ServerIdentified && r.ServerIdentified
	for code, c := range r.StatusCodes {
		m.StatusCodes[code] += c
	}
	if r.QueueHighWater != nil && (m.QueueHighWater == nil || *r.QueueHighWater > *m.QueueHighWater) {
		hw := *r.QueueHighWater
		m.QueueHighWater = &hw
	}
	if !slices.Contains(mg.clients, r.Client) {
		mg.clients = append(mg.clients, r.Client)
	}
	if r.LogError != "" {
		mg.logErrors = append(mg.logErrors, "segment "+r.Segment.String()+": "+r.LogError)
	}
	for t, s := range r.Timeline {
		sum := &m.Timeline[t]
		sum.T = t
		sum.Arrivals += s.Arrivals
		sum.Dropped += s.Dropped
		sum.Behind += s.Behind
		sum.OnTime += s.OnTime
		sum.Rejected += s.Rejected
		sum.TooLate += s.TooLate
		sum.GaveUp += s.GaveUp
	}
	fromSchedule, fromSend, _ := r.LatencyHistograms() // checkSegment decoded both already: they decode
	mg.fromSchedule.Merge(fromSchedule)
	mg.fromSend.Merge(fromSend)
}

// result is the merge: the station's queue samples segment 0's, the
// latency percentiles those of the merged histograms.
func (mg *merger) result() loadgen.Result {
	m := mg.m
	for t := range m.Timeline {
		m.Timeline[t].Queue = mg.s0.Timeline[t].Queue // the one station's samples, segment 0's
	}
	m.Client = strings.Join(mg.clients, ",")
	m.LogError = strings.Join(mg.logErrors, "; ")
	unit := time.Duration(float64(time.Second) * m.TimeScale) // one model second, as the generator's
	m.SetLatency(mg.fromSchedule, mg.fromSend, unit)
	return m
}

// checkSegment says why segment r cannot be merged with segment 0, s0:
// interrupted, of another run, inconsistent in itself.
func checkSegment(s0, r loadgen.Result) error {
	name := "segment " + r.Segment.String()
	if r.Partial {
		return fmt.Errorf("%s is partial (interrupted): it holds only part of its share of the schedule", name)
	}
	if r.Scenario == (loadgen.Scenario{}) || r.Arrivals == "" || r.TimeScale <= 0 || r.StartAt.IsZero() {
		return fmt.Errorf("%s does not say its schedule (scenario, arrivals, time scale, start): it is %w", name, ErrNotSegment)
	}
	var diff []string
	if r.Scenario != s0.Scenario {
		diff = append(diff, fmt.Sprintf("scenario %+v against %+v", r.Scenario, s0.Scenario))
	}
	if r.Arrivals != s0.Arrivals {
		diff = append(diff, fmt.Sprintf("arrivals %s against %s", r.Arrivals, s0.Arrivals))
	}
	if r.TimeScale != s0.TimeScale {
		diff = append(diff, fmt.Sprintf("time scale %g against %g", r.TimeScale, s0.TimeScale))
	}
	if r.TieWindowS != s0.TieWindowS {
		diff = append(diff, fmt.Sprintf("tie window %g against %g", r.TieWindowS, s0.TieWindowS))
	}
	if r.Target != s0.Target {
		diff = append(diff, fmt.Sprintf("target %s against %s", r.Target, s0.Target))
	}
	if !r.StartAt.Equal(s0.StartAt) {
		diff = append(diff, fmt.Sprintf("start %s against %s", r.StartAt.Format(time.RFC3339Nano), s0.StartAt.Format(time.RFC3339Nano)))
	}
	if len(diff) > 0 {
		return fmt.Errorf("%s is not of segment %s's run: %s", name, s0.Segment, strings.Join(diff, "; "))
	}
	if len(r.Timeline) != len(s0.Timeline) || len(r.Timeline) != r.Scenario.Duration {
		return fmt.Errorf("%s has %d timeline seconds, segment %s %d, the scenario %d", name, len(r.Timeline), s0.Segment,
			len(s0.Timeline), r.Scenario.Duration)
	}
	if err := check(r); err != nil {
		return fmt.Errorf("%s %w", name, err)
	}
	if r.Scenario.Mode == loadgen.Open {
		if want := loadgen.SegmentArrivals(r.Scenario.Schedule, *r.Segment); r.Scheduled != want {
			return fmt.Errorf("%s scheduled %d arrivals, not its %d of the schedule", name, r.Scheduled, want)
		}
	}
	if _, _, err := r.LatencyHistograms(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// check says what breaks the invariants of a whole (not partial) Result:
// every request in one outcome, every error status under its code, every
// scheduled arrival sent, dropped or behind, and in the timeline's second
// it was scheduled in.
func check(r loadgen.Result) error {
	sum := 0
	for _, n := range r.Outcomes() {
		sum += n
	}
	if sum != r.Requests {
		return fmt.Errorf("does not add up: its outcomes add up to %d, not its %d requests", sum, r.Requests)
	}
	if r.Requests+r.Dropped+r.Behind != r.Scheduled {
		return fmt.Errorf("does not add up: %d requests + %d dropped + %d behind is not its %d scheduled",
			r.Requests, r.Dropped, r.Behind, r.Scheduled)
	}
	codes := 0
	for c := range maps.Values(r.StatusCodes) {
		codes += c
	}
	if codes != r.ErrorStatus {
		return fmt.Errorf("does not add up: its status codes count %d, its error statuses %d", codes, r.ErrorStatus)
	}
	var tl loadgen.Second
	for _, s := range r.Timeline {
		tl.Arrivals, tl.Dropped, tl.Behind = tl.Arrivals+s.Arrivals, tl.Dropped+s.Dropped, tl.Behind+s.Behind
	}
	if tl.Arrivals != r.Requests || tl.Dropped != r.Dropped || tl.Behind != r.Behind {
		return fmt.Errorf("does not add up: its timeline has %d arrivals, %d dropped, %d behind, its totals %d, %d, %d",
			tl.Arrivals, tl.Dropped, tl.Behind, r.Requests, r.Dropped, r.Behind)
	}
	return nil
}

func clonePtr(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
