package loadgen

import (
	"errors"
	"fmt"

	"github.com/loadlab/loadlab/client/split"
	"github.com/loadlab/loadlab/mockservice/field"
)

// Segment is part Index of Count of one schedule, numbered from 0 like a
// Kubernetes Indexed Job's JOB_COMPLETION_INDEX. Open arrival number hit
// (the pacer's index) belongs to segment hit % Count, closed user u to
// segment u % Count: n generators, one per segment, together offer exactly
// the schedule one generator would, each arrival at its scheduled time.
// The zero value is the whole schedule.
type Segment struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

func (s Segment) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// MaxSegments bounds a split.
const MaxSegments = split.Max

// ParseSegment reads "i/n": segment i of n, 0 ≤ i < n.
func ParseSegment(s string) (Segment, error) {
	i, n, err := split.Parse(s, "segment")
	if err != nil {
		return Segment{}, err
	}
	return Segment{Index: i, Count: n}, nil
}

// Validate names what is wrong with s (a *field.Error of segment); the
// zero value is the whole run.
func (s Segment) Validate() error {
	switch {
	case s == Segment{}:
		return nil
	case s.Count < 1 || s.Count > MaxSegments:
		return field.Errorf("segment", "the count %d must be in [1, %d]", s.Count, MaxSegments)
	case s.Index < 0 || s.Index >= s.Count:
		return field.Errorf("segment", "the index %d must be in [0, %d)", s.Index, s.Count)
	}
	return nil
}

// whole reports whether s is the zero value: the whole schedule.
func (s Segment) whole() bool { return s == Segment{} }

// count is the number of segments, 1 for the whole schedule.
func (s Segment) count() int { return max(s.Count, 1) }

// share is how many of total things numbered from 0 (arrivals, users)
// fall to s: those numbered Index, Index + Count, …
func (s Segment) share(total int) int {
	n := s.count()
	if total <= s.Index {
		return 0
	}
	return (total - s.Index + n - 1) / n
}

// SegmentArrivals is how many arrivals of an open schedule segment s
// sends: the whole schedule's for the zero Segment.
func SegmentArrivals(sc Schedule, s Segment) int {
	return s.share(int(RampPacer{Schedule: sc}.Len()))
}

// ErrStartPassed: the run's StartAt had passed when the generator was
// ready to start (identified, and reset, the target): started late, its
// segment would not be its part of the shared schedule. Nothing was sent.
var ErrStartPassed = errors.New("loadgen: the start time has passed")
