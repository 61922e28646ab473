package mockproc

import (
	"bytes"
	"strings"
	"testing"
)

// The mock process's ready line reads back as written, says what the
// store replayed, and anything else printed first is refused.
func TestMockReadyLine(t *testing.T) {
	var b bytes.Buffer
	in := MockReady{URL: "http://127.0.0.1:4242", Store: "/dev/shm/s/records.wal", Writes: 7, TornEnd: true}
	if err := in.Write(&b); err != nil {
		t.Fatal(err)
	}
	got, err := readMockReady(strings.TrimSuffix(b.String(), "\n"))
	if err != nil || got != in || strings.Count(b.String(), "\n") != 1 {
		t.Errorf("read %+v, %v from %q; want %+v on one line", got, err, b.String(), in)
	}
	if want := "store /dev/shm/s/records.wal: 7 accepted writes replayed; a torn last line (an append cut short, never acknowledged) was ignored"; got.Replayed() != want {
		t.Errorf("replayed %q, want %q", got.Replayed(), want)
	}
	for _, line := range []string{"", "http://127.0.0.1:4242", `{"url":"127.0.0.1:4242"}`, "panic: boom"} {
		if _, err := readMockReady(line); err == nil {
			t.Errorf("%q read as a ready line", line)
		}
	}
}
