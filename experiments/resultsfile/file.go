package resultsfile

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/loadlab/loadlab/mockservice/atomicfile"
)

// WriteJSON writes v as indented JSON to path.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'))
}

// maxResultsBytes bounds what ReadResults reads.
const maxResultsBytes = 1 << 30

// ReadResults loads a results.json.
func ReadResults(path string) (*Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r Results
	if err := json.NewDecoder(io.LimitReader(f, maxResultsBytes)).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return NormalizeResults(&r), nil
}

// NormalizeResults brings results decoded from JSON written by an older
// runner to the current shape (run statuses, valid runs per cell), as
// ReadResults does.
func NormalizeResults(r *Results) *Results {
	for i := range r.Runs {
		r.Runs[i].normalize()
	}
	if r.Format < ResultsFormat { // cells written before they counted valid runs
		for i, c := range r.Cells {
			r.Cells[i].Valid = ValidRuns(r.Runs, c.Cell)
		}
	}
	return r
}
