package cli

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

// Help shows the synopsis, then the flags group by group in the groups'
// order, the rest under "Other flags"; a typo of a flag gets "did you
// mean", and the error exits 2.
func TestFlagSetGroupsAndHints(t *testing.T) {
	var out bytes.Buffer
	fs, parse := NewFlagSet("demo", "Does a demo.\n", &out, Group{Name: "Target", Flags: []string{"target"}}, Group{Name: "Output", Flags: []string{"json"}})
	fs.String("target", "http://x", "where")
	fs.Bool("json", false, "as JSON")
	fs.Int("records", 200, "how many")
	if err := parse([]string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatal(err)
	}
	h := out.String()
	ti, oi, ri := strings.Index(h, "Target:\n  -target string"), strings.Index(h, "Output:\n  -json"), strings.Index(h, "Other flags:\n  -records int")
	if !strings.HasPrefix(h, "Usage: loadlab demo [flags]\n\nDoes a demo.\n\n") || ti < 0 || oi < ti || ri < oi || !strings.Contains(h, `(default "http://x")`) {
		t.Errorf("help:\n%s", h)
	}
	err := parse([]string{"--recrds", "3"})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.HasSuffix(err.Error(), "; did you mean --records?") {
		t.Errorf("%v", err)
	}
	if s := Suggest("experment", []string{"experiment", "run"}); s != `; did you mean "experiment"?` {
		t.Errorf("%q", s)
	}
	if CheckURL("run", "--target", "http://a") != nil || CheckURL("run", "--target", "") != nil {
		t.Error("good URLs refused")
	}
}
