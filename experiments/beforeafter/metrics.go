package beforeafter

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is what a set of runs holds: the record client's runs (loadlab run
// --json, or an experiment's results folder) or loads (loadlab load
// --json). Each has its own metrics.
type Kind string

const (
	Runs  Kind = "runs"
	Loads Kind = "loads"
)

// Direction says which way a metric gets better.
type Direction string

const (
	HigherIsBetter Direction = "higher is better"
	LowerIsBetter  Direction = "lower is better"
)

// Metric is one figure a comparison may read: its name (a name ending
// ".NAME" stands for one per dependency, "rejected.enrichment"), unit,
// which way is better, whether it is compared unless --metric says
// otherwise, and what it is.
type Metric struct {
	Name      string    `json:"name"`
	Unit      string    `json:"unit"`
	Direction Direction `json:"direction"`
	Default   bool      `json:"default,omitempty"`
	About     string    `json:"about"`
}

// runMetrics are the record client's: rates and times in lab seconds (real
// seconds ÷ the time scale), as every figure of an experiment. The
// defaults are six, so that five runs a side can reach significance over
// them (see RunsNeeded).
var runMetrics = []Metric{
	{"accepted_per_second", "records/lab s", HigherIsBetter, true, "records whose write was accepted, per lab second"},
	{"duration_seconds", "lab s", LowerIsBetter, true, "the run's length"},
	{"rejected.NAME", "calls", LowerIsBetter, true, "calls dependency NAME refused (429/503)"},
	{"call_timeouts", "calls", LowerIsBetter, true, "calls that timed out"},
	{"permit_timeouts", "calls", LowerIsBetter, true, "calls that waited too long for a permit"},
	{"rate_timeouts", "calls", LowerIsBetter, false, "calls that waited too long for a rate token"},
	{"write_rejections", "calls", LowerIsBetter, false, "writes refused (429/503)"},
	{"errors", "calls", LowerIsBetter, false, "calls that ended in an error"},
	{"complete", "records", HigherIsBetter, false, "records complete"},
	{"incomplete", "records", LowerIsBetter, false, "records written with an optional step failed"},
	{"write_rejected", "records", LowerIsBetter, false, "records whose write was refused"},
	{"failed", "records", LowerIsBetter, false, "records not written, known to the client"},
	{"write_unknown", "records", LowerIsBetter, false, "records whose write has no known outcome"},
}

// loadMetrics are a load's: latencies from each request's scheduled time,
// of the requests answered on time, in lab milliseconds.
var loadMetrics = []Metric{
	{"on_time", "requests", HigherIsBetter, true, "requests answered on time"},
	{"rejected", "requests", LowerIsBetter, true, "requests refused"},
	{"timed_out", "requests", LowerIsBetter, true, "requests the client gave up on"},
	{"p50_ms", "lab ms", LowerIsBetter, true, "median latency"},
	{"p95_ms", "lab ms", LowerIsBetter, true, "95th percentile latency"},
	{"p99_ms", "lab ms", LowerIsBetter, true, "99th percentile latency"},
	{"p90_ms", "lab ms", LowerIsBetter, false, "90th percentile latency"},
	{"max_ms", "lab ms", LowerIsBetter, false, "the longest latency"},
	{"too_late", "requests", LowerIsBetter, false, "requests served after the client gave up"},
	{"unfinished", "requests", LowerIsBetter, false, "requests not finished when the run ended"},
	{"dropped", "requests", LowerIsBetter, false, "arrivals not sent: the generator's cap was reached"},
	{"error_status", "requests", LowerIsBetter, false, "requests answered with an unexpected status"},
	{"transport_errors", "requests", LowerIsBetter, false, "requests that failed on the wire"},
	{"wasted_worker_s", "worker lab s", LowerIsBetter, false, "worker time spent on requests the client had given up on"},
}

// Metrics is kind's table of metrics, in the order a comparison lists them.
func Metrics(kind Kind) []Metric {
	if kind == Loads {
		return slices.Clone(loadMetrics)
	}
	return slices.Clone(runMetrics)
}

// Lookup is the metric of kind that name is (rejected.geo is
// rejected.NAME's, with its name), and whether there is one.
func Lookup(kind Kind, name string) (Metric, bool) {
	for _, m := range Metrics(kind) {
		prefix, each := strings.CutSuffix(m.Name, ".NAME")
		if m.Name == name || each && strings.HasPrefix(name, prefix+".") && len(name) > len(prefix)+1 {
			m.Name = name
			return m, true
		}
	}
	return Metric{}, false
}

// Names lists kind's metric names, as --metric takes them.
func Names(kind Kind) []string {
	var out []string
	for _, m := range Metrics(kind) {
		out = append(out, m.Name)
	}
	return out
}

// selectMetrics is the metrics compared: those named (each must be of
// kind's table), else the defaults, ".NAME" ones once per name the runs
// have; in the table's order, the per-dependency ones by name.
func selectMetrics(kind Kind, named []string, have map[string]bool) ([]Metric, error) {
	var out []Metric
	for _, n := range named {
		m, ok := Lookup(kind, n)
		if !ok || strings.HasSuffix(n, ".NAME") {
			return nil, fmt.Errorf("--metric: no metric %q for %s; there are: %s", n, kind, strings.Join(Names(kind), ", "))
		}
		if !slices.ContainsFunc(out, func(x Metric) bool { return x.Name == n }) {
			out = append(out, m)
		}
	}
	if len(named) > 0 {
		return out, nil
	}
	var keys []string
	for k := range have {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, m := range Metrics(kind) {
		if !m.Default {
			continue
		}
		prefix, each := strings.CutSuffix(m.Name, ".NAME")
		if !each {
			out = append(out, m)
			continue
		}
		for _, k := range keys {
			if strings.HasPrefix(k, prefix+".") {
				one := m
				one.Name = k
				out = append(out, one)
			}
		}
	}
	return out, nil
}
