package comparecmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/budgets"
	"github.com/loadlab/loadlab/client/loadgen"
	"github.com/loadlab/loadlab/client/loadresult"
	"github.com/loadlab/loadlab/client/records"
	"github.com/loadlab/loadlab/experiments/beforeafter"
	"github.com/loadlab/loadlab/experiments/judge"
	"github.com/loadlab/loadlab/experiments/resultsfile"
	"github.com/loadlab/loadlab/mockservice/api"
)

// Sources of a side's runs.
const (
	fromResults = "results folder"
	fromRun     = "loadlab run --json"
	fromLoad    = "loadlab load --json"
)

// input is one side as read: where it came from, the results' experiment
// (a results folder's), each configuration its runs ran with (a key, by
// the files that ran it: the strategy or the load's scenario, the time
// scale and the rest of what sets the workload) and the runs by cell.
type input struct {
	arg, source string
	experiment  string
	sha256      string
	configs     map[string][]string
	side        beforeafter.Side
}

// runs is how many runs the side holds.
func (in *input) runs() int {
	n := 0
	for _, c := range in.side.Cells {
		n += len(c.Runs)
	}
	return n
}

// readInput reads one side: a results folder (or its results.json), a
// folder of JSON files, a file, or a quoted glob of files; each file holds
// one or more results of loadlab run --json or loadlab load --json.
func readInput(arg string) (*input, error) {
	files, err := filesOf(arg)
	if err != nil {
		return nil, err
	}
	in := &input{arg: arg, configs: map[string][]string{}}
	if len(files) == 1 && filepath.Base(files[0]) == "results.json" {
		return in, in.readResults(files[0])
	}
	for _, f := range files {
		if err := in.readFile(f); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// filesOf lists the files arg names.
func filesOf(arg string) ([]string, error) {
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		if r := filepath.Join(arg, "results.json"); isFile(r) {
			return []string{r}, nil
		}
		files, _ := filepath.Glob(filepath.Join(arg, "*.json"))
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no results.json and no *.json files in it", arg)
		}
		return files, nil
	case err == nil:
		return []string{arg}, nil
	case errors.Is(err, os.ErrNotExist) && strings.ContainsAny(arg, "*?["):
		files, gerr := filepath.Glob(arg)
		if gerr != nil || len(files) == 0 {
			return nil, fmt.Errorf("%s: no file matches", arg)
		}
		slices.Sort(files)
		return files, nil
	}
	return nil, err
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// readResults reads an experiment's results: its valid runs by cell, in
// the matrix's order, each with its seed.
func (in *input) readResults(path string) error {
	res, err := resultsfile.ReadResults(path)
	if err != nil {
		return err
	}
	if res.Shard != nil {
		return fmt.Errorf("%s: one shard's partial results: merge the shards first (loadlab merge)", path)
	}
	in.source, in.experiment, in.sha256 = fromResults, res.Experiment.Name, res.ExperimentSHA256
	in.side.Kind = beforeafter.Runs
	for _, c := range res.Experiment.Cells() {
		cell := beforeafter.Cell{Name: c.String()}
		for _, r := range res.Runs {
			if r.Cell != c || !r.Valid() {
				continue
			}
			vals := r.Metrics
			if vals == nil && r.Client != nil {
				vals = runValues(*r.Client)
			}
			vals = withRejections(vals, r.Client)
			cell.Runs = append(cell.Runs, beforeafter.Run{Seed: r.Seed, HasSeed: true, Values: vals})
		}
		in.side.Cells = append(in.side.Cells, cell)
	}
	return nil
}

// readFile reads every JSON value of one file: results of loadlab run
// --json or loadlab load --json, one after another (a file each run
// appended to). A file without any is refused.
func (in *input) readFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for i := 1; ; i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF && i == 1 {
			return fmt.Errorf("%s: empty: no result of %s or %s in it", path, fromRun, fromLoad)
		} else if err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: value %d: not JSON: %v", path, i, err)
		}
		if err := in.add(path, raw); err != nil {
			return err
		}
	}
}

// add adds one result: a run's or a load's, told apart by their keys.
func (in *input) add(path string, raw json.RawMessage) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return fmt.Errorf("%s: not a JSON object: %v", path, err)
	}
	has := func(k string) bool { _, ok := keys[k]; return ok }
	source := ""
	switch {
	case has("kind"):
		return fmt.Errorf("%s: a log of loadlab experiment --json-lines: compare the experiment's results folder", path)
	case has("runs") && has("experiment"):
		return fmt.Errorf("%s: an experiment's results: give it alone (its folder, or the results.json file)", path)
	case has("segment") || has("scheduled"):
		source = fromLoad
	case has("strategy") && has("accepted_per_lab_second"):
		source = fromRun
	default:
		return fmt.Errorf("%s: not the JSON of %s or %s, nor an experiment's results.json", path, fromRun, fromLoad)
	}
	if in.source != "" && in.source != source {
		return fmt.Errorf("%s: %s among %s results: one kind a side", path, source, in.source)
	}
	in.source = source
	if source == fromLoad {
		return in.addLoad(path, raw)
	}
	return in.addRun(path, raw)
}

// addRun adds a run of loadlab run --json, its seed the mock service's
// when the target was one.
func (in *input) addRun(path string, raw json.RawMessage) error {
	var r records.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("%s: not the JSON of %s: %v", path, fromRun, err)
	}
	if r.Partial {
		return fmt.Errorf("%s: an interrupted run (partial): leave it out", path)
	}
	run := beforeafter.Run{Values: withRejections(runValues(r), &r)}
	if r.Server != nil {
		run.Seed, run.HasSeed = r.Server.Seed, true
	}
	key := struct {
		Strategy      any     `json:"strategy"`
		Records       int     `json:"records,omitempty"`
		DurationLimit float64 `json:"duration_limit_lab_seconds,omitempty"`
		TimeScale     float64 `json:"time_scale"`
		Profile       string  `json:"profile,omitempty"`
	}{Strategy: r.Params, DurationLimit: r.DurationLimit, TimeScale: timeScale(r.TimeScale)}
	if r.DurationLimit == 0 {
		key.Records = r.Records
	}
	if r.Server != nil {
		key.Profile = r.Server.Profile
	}
	in.addOne(path, key, r.Strategy, run, beforeafter.Runs)
	return nil
}

// addLoad adds a load of loadlab load --json.
func (in *input) addLoad(path string, raw json.RawMessage) error {
	var r loadgen.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("%s: not the JSON of %s: %v", path, fromLoad, err)
	}
	if r.Partial {
		return fmt.Errorf("%s: an interrupted load (partial): leave it out", path)
	}
	key := struct {
		Scenario  loadgen.Scenario `json:"scenario"`
		Arrivals  loadgen.Arrivals `json:"arrivals,omitempty"`
		Client    string           `json:"client"`
		TimeScale float64          `json:"time_scale"`
	}{r.Scenario, r.Arrivals, r.Client, timeScale(r.TimeScale)}
	in.addOne(path, key, string(r.Scenario.Mode), beforeafter.Run{Values: loadresult.Figures(r)}, beforeafter.Loads)
	return nil
}

// addOne files a run under its configuration, in the side's one cell
// (named after the strategy, or the load's generator).
func (in *input) addOne(path string, key any, name string, run beforeafter.Run, kind beforeafter.Kind) {
	b, _ := json.Marshal(key)
	if !slices.Contains(in.configs[string(b)], path) {
		in.configs[string(b)] = append(in.configs[string(b)], path)
	}
	in.side.Kind = kind
	if len(in.side.Cells) == 0 {
		in.side.Cells = []beforeafter.Cell{{Name: name}}
	}
	in.side.Cells[0].Runs = append(in.side.Cells[0].Runs, run)
}

// timeScale is a result's time scale, 1 (real time) when it gives none.
func timeScale(s float64) float64 {
	if s <= 0 {
		return 1
	}
	return s
}

// runValues are a run's metrics as an experiment derives them (rates and
// times in lab seconds).
func runValues(r records.Result) map[string]float64 {
	scale := timeScale(r.TimeScale)
	var st api.Stats
	if r.Server != nil {
		st = *r.Server
	}
	return judge.MetricsOf(r, st, scale)
}

// withRejections adds to vals the calls each dependency refused,
// rejected.NAME, from the client's result.
func withRejections(vals map[string]float64, r *records.Result) map[string]float64 {
	if r == nil {
		return vals
	}
	out := make(map[string]float64, len(vals)+len(r.Calls))
	for k, v := range vals {
		out[k] = v
	}
	for dep, byClass := range r.Calls {
		out["rejected."+dep] = float64(byClass[budgets.Rejected])
	}
	return out
}
