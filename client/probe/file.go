package probe

import (
	"encoding/json"
	"fmt"
	"os"
)

// ReadFile reads a probe's result: what loadlab probe --json prints, or
// its --out folder's probe.json.
func ReadFile(path string) (Result, error) {
	var r Result
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s is not the JSON of loadlab probe --json: %w", path, err)
	}
	if len(r.Steps) == 0 {
		return r, fmt.Errorf("%s holds no measured step: is it the JSON of loadlab probe --json?", path)
	}
	return r, nil
}
