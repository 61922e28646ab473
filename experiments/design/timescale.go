package design

import "slices"

// InRealTime says whether cell c runs at time scale 1 whatever the
// experiment's time scale: a real_time entry matches it (as Exclude's
// lists do). A cell in real time has no time-scale bias to calibrate.
func (s Spec) InRealTime(c Cell) bool {
	return slices.ContainsFunc(s.RealTime, func(e Exclude) bool { return e.matches(c) })
}

// ScaleOf is the time scale cell c runs at: 1 in real time, else the
// experiment's.
func (s Spec) ScaleOf(c Cell) float64 {
	if s.InRealTime(c) {
		return 1
	}
	return s.TimeScale
}

// NeedsScaleOne says whether the experiment runs cells at time scale 1
// while its own time scale is another: they need a mock service of their
// own at time scale 1.
func (s Spec) NeedsScaleOne() bool { return len(s.RealTimeCells()) > 0 }

// validateRealTime checks the real_time section: its lists name the
// matrix's own; no phased scenario runs in real time (its faults and
// restarts act on the experiment's mock service); the advised cells of a
// scenario, probed once, share one time scale.
func (s Spec) validateRealTime() *problem {
	for i, e := range s.RealTime {
		if p := s.validateLists(at("real_time", i), e.Strategies, e.Scenarios, e.CPUs); p != nil {
			return p
		}
	}
	scale := map[string]float64{}
	for _, c := range s.Cells() {
		if !s.InRealTime(c) {
			if c.Strategy == Advised {
				scale[c.Scenario] = s.TimeScale
			}
			continue
		}
		if _, ok := s.Phased(c.Scenario); ok {
			return failf(at("real_time"), "%s is a phased scenario: its faults and restarts act on the experiment's mock service, so it cannot run in real time", c.Scenario)
		}
		if c.Strategy == Advised {
			scale[c.Scenario] = 1
		}
	}
	for _, c := range s.Cells() {
		if c.Strategy == Advised && scale[c.Scenario] != s.ScaleOf(c) {
			return failf(at("real_time"), "the advised cells of %s are probed once, so they run in real time all or none (%s does not)", c.Scenario, c)
		}
	}
	return nil
}

// RealTimeCells are the cells that run at time scale 1 while the
// experiment's time scale is another, in the matrix's order.
func (s Spec) RealTimeCells() []Cell {
	if s.TimeScale == 1 {
		return nil
	}
	var out []Cell
	for _, c := range s.Cells() {
		if s.InRealTime(c) {
			out = append(out, c)
		}
	}
	return out
}
