package mockproc

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// MockReady is what the runner's mock process says once it serves (its
// first line of standard output, one JSON object): where it listens and
// what its store replayed. The process writes it with Write; the runner
// reads nothing else from it.
type MockReady struct {
	URL string `json:"url"`
	// Store is the store's file; Writes the accepted writes it replayed;
	// TornEnd a last line cut short (an append a crash interrupted, never
	// acknowledged) that was ignored.
	Store   string `json:"store"`
	Writes  int    `json:"writes"`
	TornEnd bool   `json:"torn_end,omitempty"`
}

// Write prints r as the process's ready line.
func (r MockReady) Write(w io.Writer) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Replayed says what the store replayed, as the runner logs it with a
// restart.
func (r MockReady) Replayed() string {
	torn := ""
	if r.TornEnd {
		torn = "; a torn last line (an append cut short, never acknowledged) was ignored"
	}
	return fmt.Sprintf("store %s: %d accepted writes replayed%s", r.Store, r.Writes, torn)
}

// readMockReady decodes a ready line: an error when the process printed
// something else (it did not start).
func readMockReady(line string) (MockReady, error) {
	var r MockReady
	if err := json.Unmarshal([]byte(line), &r); err != nil || !strings.HasPrefix(r.URL, "http://") {
		return MockReady{}, fmt.Errorf("not a ready line: %q", line)
	}
	return r, nil
}
