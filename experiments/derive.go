package experiments

import (
	"fmt"

	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/mockservice/api"
	"github.com/loadlab/loadlab/mockservice/config"
)

// metricsOf flattens a run into the named metrics hypotheses use; times and
// rates are in lab seconds (the hypotheses' "accepted_per_second" is per lab
// second).
func metricsOf(c records.Result, s api.Stats, scale float64) map[string]float64 {
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
	return m
}

// Summaries computes every cell's statistics and bound.
func Summaries(spec Spec, runs []RunRecord, mockCfg config.Config, advised map[string]*AdvisedStrategy) []CellSummary {
	var out []CellSummary
	for _, c := range spec.Cells() {
		cs := CellSummary{Cell: c, Stats: map[string]Stat{}}
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
		s, _ := spec.Strategy(c, advised)
		inFlight := s.RecordsInFlight
		if st, ok := cs.Stats["records_in_flight"]; ok {
			inFlight = int(st.Median)
		}
		cs.Bound = CellBound(mockCfg, c.Scenario, s, inFlight, spec.CallTimeout)
		if st, ok := cs.Stats["accepted_per_second"]; ok && cs.Bound.Bound > 0 {
			cs.Efficiency = st.Median / cs.Bound.Bound
		}
		out = append(out, cs)
	}
	return out
}
