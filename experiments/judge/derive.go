package judge

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/design"
	"github.com/loadlab/loadlab/experiments/plan"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// MetricsOf flattens a run into the named metrics hypotheses use; times and
// rates are in lab seconds (the hypotheses' "accepted_per_second" is per lab
// second).
func MetricsOf(c records.Result, s api.Stats, scale float64) map[string]float64 {
	m := map[string]float64{
		"accepted_per_second":       c.AcceptedPerLabSecond, // per lab second, as every rate of an experiment
		"duration_seconds":          c.DurationSeconds / scale,
		"write_rejections":          float64(c.WriteRejections),
		"peak_concurrent_writes":    float64(s.Stations[api.Records].HighWater.Offered),
		"peak_in_flight_enrichment": float64(c.PeakInFlight[records.Enrichment]),
		"peak_in_flight_records":    float64(c.PeakInFlight[records.Records]),
		"incomplete":                float64(c.Incomplete),
		"incomplete_fraction":       float64(c.Incomplete) / float64(c.Records),
		"complete":                  float64(c.Complete),
		"write_rejected":            float64(c.WriteRejected),
		"failed":                    float64(c.Failed),
		"permit_timeouts":           float64(c.PermitTimeouts),
		"rate_timeouts":             float64(c.RateTimeouts),
		"write_unknown":             float64(c.WriteUnknown),
		"call_timeouts":             float64(c.CallTimeouts),
		"errors":                    float64(c.Errors),
		"gomaxprocs":                float64(c.GOMAXPROCS),
		"num_cpu":                   float64(c.NumCPU),
		"records_in_flight":         float64(c.RecordsInFlight),
		"peak_records_in_flight":    float64(c.PeakRecordsInFlight),
		"stored_writes":             float64(s.StoredWrites),
	}
	if c.CPUQuota != nil {
		m["cpu_quota"] = *c.CPUQuota
	}
	// Offered load amplification: requests the server saw per first attempt
	// (results from before retries have no attempts, and no such metric).
	for dep, a := range c.Attempts {
		if a.FirstAttempts == 0 {
			continue
		}
		n := 0.0
		for _, o := range api.Outcomes {
			n += s.Stations[dep].Requests[o]
		}
		m[dep+"_amplification"] = n / float64(a.FirstAttempts)
		m[dep+"_retries"] = float64(a.Retries)
		m[dep+"_retries_denied"] = float64(a.Denied)
	}
	limitMetrics := func(prefix string, ls map[string]records.LimitStats) {
		for dep, l := range ls {
			m[prefix+dep+"_limit_min"], m[prefix+dep+"_limit_median"], m[prefix+dep+"_limit_last"] = float64(l.Min), float64(l.Median), float64(l.Last)
		}
	}
	limitMetrics("", c.Limits)
	for _, ph := range c.Phases {
		limitMetrics(design.PhaseKey(ph.Name, ""), ph.Limits)
		for k, v := range map[string]float64{
			"accepted": float64(ph.Accepted), "accepted_per_second": ph.AcceptedPerLabSecond,
			"write_rejections": float64(ph.WriteRejections), "peak_writes_in_flight": float64(ph.PeakConcurrentWrites),
			"ended": float64(ph.Ended), "record_latency_p50_ms": ph.LatencyMs.P50,
			"record_latency_p95_ms": ph.LatencyMs.P95, "record_latency_p99_ms": ph.LatencyMs.P99,
			"complete": float64(ph.States[records.Complete]), "incomplete": float64(ph.States[records.Incomplete]),
			"write_rejected": float64(ph.States[records.WriteRejected]), "failed": float64(ph.States[records.Failed]),
			"write_unknown": float64(ph.States[records.WriteUnknown]),
		} {
			m[design.PhaseKey(ph.Name, k)] = v
		}
	}
	return m
}

// Summaries computes every cell's statistics and bound.
func Summaries(spec design.Spec, runs []resultsfile.RunRecord, mockCfg config.Config, advised map[string]*resultsfile.AdvisedStrategy) []resultsfile.CellSummary {
	strategies := AdvisedStrategies(advised)
	var out []resultsfile.CellSummary
	for _, c := range spec.Cells() {
		cs := resultsfile.CellSummary{Cell: c, Stats: map[string]resultsfile.Stat{}}
		byMetric := map[string][]float64{}
		for _, r := range runs {
			if r.Cell != c {
				continue
			}
			cs.Runs++
			if cs.Mechanism == "" {
				cs.Mechanism = r.Mechanism
			}
			if !r.Valid() {
				cs.Excluded = append(cs.Excluded, fmt.Sprintf("run %d: %s: %s", r.Run, r.Status, r.Reason))
				continue
			}
			cs.Valid++
			for k, v := range r.Metrics {
				byMetric[k] = append(byMetric[k], v)
			}
		}
		for k, vals := range byMetric {
			cs.Stats[k] = Summarize(vals)
		}
		s, _ := spec.Strategy(c, strategies)
		inFlight := s.RecordsInFlight
		if st, ok := cs.Stats["records_in_flight"]; ok {
			inFlight = int(st.Median)
		}
		if _, phased := spec.Phased(c.Scenario); phased || spec.Own != nil {
			// Conditions change during the run, or the services are one's
			// own: no one profile of the lab's bounds it.
			out = append(out, cs)
			continue
		}
		cs.Bound = plan.CellBound(mockCfg, c.Scenario, s, inFlight, spec.CallTimeout)
		if st, ok := cs.Stats["accepted_per_second"]; ok && cs.Bound.Bound > 0 {
			cs.Efficiency = st.Median / cs.Bound.Bound
		}
		out = append(out, cs)
	}
	return out
}

// Derive computes a run's metrics, reconciliation and status from its raw
// client result, server stats, quiet waits and resolved writes; loadlab
// check calls it again on stored runs. The status, valid when it starts,
// becomes, in this order: failed when the client reports trouble (the
// child exited 1 for it: what it measured is kept, not counted);
// contaminated when earlier work was still going at the reset; invalid
// when the server did not go quiet after the run (its counts are not
// final), drew from another seed than the run's, or does not reconcile
// with the client.
func Derive(rec *resultsfile.RunRecord, scale float64) {
	rec.Metrics = MetricsOf(*rec.Client, *rec.Server, scale)
	var unknown resultsfile.Resolution
	if rec.Unknown != nil {
		unknown = *rec.Unknown
	}
	rc := Reconcile(*rec.Client, *rec.Server, unknown)
	if rec.WriteStation != "" {
		ownMetrics(rec.Metrics, *rec.Client, *rec.Server, rec.WriteStation, rec.Real)
		rc = ReconcileCopies(*rec.Client, *rec.Server, unknown, rec.WriteStation, rec.Real)
	}
	// The lab's faulted runs reconcile with its store; the copies' with
	// their counts, as any run of theirs (they neither restart nor store).
	labFaulted := rec.Faulted && rec.WriteStation == ""
	if labFaulted {
		rc = ReconcileRestarted(*rec.Client, *rec.Server, unknown, rec.Restarts())
	}
	rec.Reconciliation = &rc
	// Writes answered 201 or 200, or of unknown outcome and found stored, that the
	// store does not hold: 0 when nothing acknowledged was lost. Only the
	// lab's runs with faults or restarts have it (results from before it
	// keep their metrics as they were).
	if labFaulted {
		rec.Metrics["acknowledged_writes_lost"] = float64(rec.Client.WritesCreated + rec.Client.WritesDuplicate + unknown.Stored - rec.Server.StoredWrites)
	}
	if rec.Status != resultsfile.RunValid {
		return
	}
	switch {
	case rec.Client.Trouble() != "" && !rec.Faulted:
		rec.Status, rec.Reason = resultsfile.RunFailed, "the client exited 1: "+rec.Client.Trouble()
	case rec.PhaseTrouble() != "":
		rec.Status, rec.Reason = resultsfile.RunFailed, rec.PhaseTrouble()
	case !rec.QuietBefore.Quiet:
		rec.Status, rec.Reason = resultsfile.RunContaminated, "earlier work at the reset: "+rec.QuietBefore.String()
	case rec.Client.RecordsCapReached:
		rec.Status, rec.Reason = resultsfile.RunInvalid, fmt.Sprintf("all %d records of the cap began before the run's duration ended: it was not time-bounded", rec.Client.Records)
	case lateStart(*rec, scale) != "":
		rec.Status, rec.Reason = resultsfile.RunInvalid, lateStart(*rec, scale)
	case lateChange(*rec) != "":
		rec.Status, rec.Reason = resultsfile.RunInvalid, lateChange(*rec)
	case !rec.QuietAfter.Quiet:
		rec.Status, rec.Reason = resultsfile.RunInvalid, "the server's counts are not final: after the run, "+rec.QuietAfter.String()
	case rec.Server.Seed != rec.Seed:
		rec.Status, rec.Reason = resultsfile.RunInvalid, fmt.Sprintf("the mock service drew from seed %d, not the run's %d", rec.Server.Seed, rec.Seed)
	case len(rc.Differences) > 0:
		rec.Status, rec.Reason = resultsfile.RunInvalid, "client and server do not reconcile: "+strings.Join(rc.Differences, "; ")
	}
}
