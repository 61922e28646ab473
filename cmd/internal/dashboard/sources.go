package dashboard

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/mockservice/api"
)

// Budgets are a run's limits per dependency, drawn as dashed lines beside
// its calls in flight (an adaptive limit's gauge replaces its line).
type Budgets map[string]int

// WatchRun charts a record run from its own Prometheus registry (the
// budgets' metrics) once a lab second (at most four times a real second),
// until ctx ends: calls in flight
// per dependency against its budget, calls per second by how they ended,
// callers waiting for a permit, and the accepted writes (ok calls of
// write, the pipeline's last dependency) per lab second; and, when mock is
// a loadlab mock service, its system of record's queue (one scrape per
// row: the only request the dashboard makes).
func (s *Server) WatchRun(ctx context.Context, reg prometheus.Gatherer, budgets Budgets, deps []string, write string, timeScale float64, mock *api.Client) {
	start := time.Now()
	prev, prevLab := map[string]float64{}, 0.0
	// A row each lab second, at most four a second of real time.
	t := time.NewTicker(max(time.Duration(float64(time.Second)*timeScale), 250*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			lab := now.Sub(start).Seconds() / timeScale
			m := gather(reg)
			queue := -1.0
			if mock != nil {
				sctx, cancel := context.WithTimeout(ctx, time.Second)
				if st, err := mock.Scrape(sctx); err == nil {
					queue = float64(st.Stations["records"].QueueLength)
				}
				cancel()
			}
			s.Update(func(st *State) { chartRecordRun(st, m, prev, budgets, deps, write, lab, lab-prevLab, queue) })
			prev, prevLab = m.calls, lab
		}
	}
}

// runMetrics are the budgets' metrics at one moment, by dependency.
type runMetrics struct {
	inFlight, limit, waiting map[string]float64
	// calls is the calls so far by "dependency class".
	calls map[string]float64
}

// gather reads the budgets' metrics from reg.
func gather(reg prometheus.Gatherer) runMetrics {
	m := runMetrics{inFlight: map[string]float64{}, limit: map[string]float64{}, waiting: map[string]float64{}, calls: map[string]float64{}}
	families, err := reg.Gather()
	if err != nil {
		return m
	}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			dep := labels["dependency"]
			switch f.GetName() {
			case "loadlab_client_calls_in_flight":
				m.inFlight[dep] = mt.GetGauge().GetValue()
			case "loadlab_client_limit":
				m.limit[dep] = mt.GetGauge().GetValue()
			case "loadlab_client_permit_waiting":
				m.waiting[dep] = mt.GetGauge().GetValue()
			case "loadlab_client_calls_total":
				m.calls[dep+" "+labels["class"]] = mt.GetCounter().GetValue()
			}
		}
	}
	return m
}

// The time axes' labels.
const (
	sinceRun  = "lab seconds since the run began"
	sinceLoad = "model seconds since the load began"
)

// classes are the ways a call ends, as the budgets count them.
var classes = []string{"ok", "rejected", "call_timeout", "permit_timeout", "rate_timeout", "error"}

// chartRecordRun adds one lab second of a record run to its charts.
func chartRecordRun(st *State, m runMetrics, prev map[string]float64, budgets Budgets, allDeps []string, write string, lab, dt, queue float64) {
	// Every dependency of the pipeline from the first row, and any other
	// the metrics name: a chart's columns must not change under it.
	deps := slices.Clone(allDeps)
	for d := range m.inFlight {
		if !slices.Contains(deps, d) {
			deps = append(deps, d)
		}
	}
	slices.Sort(deps)
	labels := []string{"lab seconds"}
	row := []float64{lab}
	var dashed []string
	for _, d := range deps {
		labels = append(labels, d)
		row = append(row, m.inFlight[d])
	}
	for _, d := range deps {
		limit, ok := m.limit[d]
		if !ok && budgets[d] > 0 {
			limit, ok = float64(budgets[d]), true
		}
		if ok {
			name := d + " budget"
			labels, row, dashed = append(labels, name), append(row, limit), append(dashed, name)
		}
	}
	c := st.Chart("inflight", func() *Chart {
		return &Chart{Title: "Calls in flight per dependency, budgets dashed", XLabel: sinceRun, YLabel: "calls in flight", YUnit: "calls"}
	})
	if !slices.Equal(c.Labels, labels) {
		c.Labels, c.Dashed, c.Rows = labels, dashed, nil // a new column: the chart starts over
	}
	c.Add(row...)
	perSecond := func(key string) float64 { return (m.calls[key] - prev[key]) / dt }
	cls := st.Chart("classes", func() *Chart {
		return &Chart{Title: "Calls ended per lab second, by how", XLabel: sinceRun, YLabel: "calls ended per lab second",
			YUnit: "calls per lab second", Labels: append([]string{"lab seconds"}, classes...)}
	})
	crow := []float64{lab}
	for _, class := range classes {
		n := 0.0
		for _, d := range deps {
			n += perSecond(d + " " + class)
		}
		crow = append(crow, n)
	}
	cls.Add(crow...)
	acc := st.Chart("accepted", func() *Chart {
		return &Chart{Title: "Accepted writes per lab second (" + write + ")", XLabel: sinceRun, YLabel: "accepted writes per lab second",
			YUnit: "writes per lab second", Labels: []string{"lab seconds", "accepted"}}
	})
	acc.Add(lab, perSecond(write+" ok"))
	wait := st.Chart("waiting", func() *Chart {
		return &Chart{Title: "Callers waiting for a permit", XLabel: sinceRun, YLabel: "callers waiting", YUnit: "callers",
			Labels: append([]string{"lab seconds"}, deps...)}
	})
	wrow := []float64{lab}
	for _, d := range deps {
		wrow = append(wrow, m.waiting[d])
	}
	wait.Add(wrow...)
	if queue >= 0 {
		q := st.Chart("queue", func() *Chart {
			return &Chart{Title: "The system of record's queue (the mock service's metrics)", XLabel: sinceRun, YLabel: "writes queued",
				YUnit: "writes", Labels: []string{"lab seconds", "queued"}}
		})
		q.Add(lab, queue)
	}
}

// LoadProgress is a load's progress for its dashboard, to be called once a
// model second (loadgen.Config.Progress), then next's (nil: none):
// requests sent and dropped per second, and each kind of reply per second.
func (s *Server) LoadProgress(next func(loadgen.Progress)) func(loadgen.Progress) {
	var prev loadgen.Progress
	return func(p loadgen.Progress) {
		if next != nil {
			next(p)
		}
		s.Update(func(st *State) {
			sent := st.Chart("sent", func() *Chart {
				return &Chart{Title: "Arrivals per model second: scheduled, sent, dropped, behind", XLabel: sinceLoad, YLabel: "requests per model second",
					YUnit: "requests per model second", Labels: []string{"model seconds", "scheduled", "sent", "dropped", "behind"}}
			})
			sch := (p.Sent + p.Dropped + p.Behind) - (prev.Sent + prev.Dropped + prev.Behind)
			sent.Add(p.Elapsed, float64(sch), float64(p.Sent-prev.Sent), float64(p.Dropped-prev.Dropped), float64(p.Behind-prev.Behind))
			rc := st.Chart("replies", func() *Chart {
				labels := []string{"model seconds"}
				for _, r := range loadgen.Replies {
					labels = append(labels, string(r))
				}
				return &Chart{Title: "Replies per model second, by what the client saw", XLabel: sinceLoad, YLabel: "replies per model second",
					YUnit: "replies per model second", Labels: labels}
			})
			row := []float64{p.Elapsed}
			for _, r := range loadgen.Replies {
				row = append(row, float64(p.Replies[r]-prev.Replies[r]))
			}
			rc.Add(row...)
			if l := p.Latency; l.Count > 0 {
				lc := st.Chart("latency", func() *Chart {
					return &Chart{Title: "Latency of the on-time replies so far, from their schedule", XLabel: sinceLoad, YLabel: "latency in model milliseconds",
						YUnit: "model milliseconds", Labels: []string{"model seconds", "p50", "p90", "p99", "max"}}
				})
				lc.Add(p.Elapsed, 1000*l.P50, 1000*l.P90, 1000*l.P99, 1000*l.Max)
			}
			st.Facts = []string{fmt.Sprintf("%.0f of %.0f model seconds; %d sent, %d dropped, %d behind", p.Elapsed, p.Duration, p.Sent, p.Dropped, p.Behind)}
		})
		prev = p
	}
}

// keyFigures are the figures the page lists of a result, when it has them.
var keyFigures = []string{"requests", "scheduled", "on_time", "rejected", "too_late", "timed_out", "unfinished", "dropped", "behind",
	"p50_ms", "p90_ms", "p99_ms", "max_ms", "accepted_per_second", "complete", "write_rejected", "write_unknown", "not_started"}

// Figures lists a result's key figures as the page's facts (each name
// says its unit: p99_ms, accepted_per_second; counts have none).
func (s *Server) Figures(figures map[string]float64) {
	if s == nil {
		return
	}
	s.Update(func(st *State) {
		st.Facts = nil
		for _, n := range keyFigures {
			if v, ok := figures[n]; ok {
				st.Facts = append(st.Facts, fmt.Sprintf("%s %.4g", n, v))
			}
		}
	})
}
