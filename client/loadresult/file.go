package loadresult

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/loadlab/loadlab/client/loadgen"
)

// IsFile reports whether path is a file holding the JSON result of
// loadlab load --segment i/n --json: a regular file whose top-level object
// has a "segment" key (a load result's first) — or a "scheduled" key, a
// whole load's result, which loadlab merge then refuses by name. It reads the
// object's keys only up to the answer: a --json-lines log of loadlab
// experiment begins {"kind": and is not one.
func IsFile(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case "segment", "scheduled":
			return true
		case "kind": // a line of a --json-lines log
			return false
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}

// ReadFile reads one segment's --json output (a result, perhaps with
// "model" beside it, which is ignored).
func ReadFile(path string) (loadgen.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return loadgen.Result{}, err
	}
	var r loadgen.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return loadgen.Result{}, fmt.Errorf("%s is not the JSON of loadlab load --json: %v", path, err)
	}
	return r, nil
}
