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

// A pairs flag is nil until given, adds key by key when given again, is
// shown in help as a string, and its refusals name the flag, not the
// flag package's "invalid value … for flag -permits".
func TestPairsFlag(t *testing.T) {
	var out bytes.Buffer
	fs, parse := NewFlagSet("run", "Runs.", &out)
	p := Pairs{Check: func(_ string, v float64) error {
		if v < 0 {
			return errors.New("must be ≥ 0")
		}
		return nil
	}}
	fs.Var(&p, "permits", "permits by name")
	if p.M != nil {
		t.Fatalf("before parsing: %v", p.M)
	}
	if err := parse([]string{"--permits", "geo=8,ledger=6", "--permits", "geo=2"}); err != nil {
		t.Fatal(err)
	}
	if len(p.M) != 2 || p.M["geo"] != 2 || p.M["ledger"] != 6 || p.String() != "geo=2,ledger=6" {
		t.Errorf("parsed %v (%s); want geo=2,ledger=6", p.M, p.String())
	}
	for arg, want := range map[string]string{"geo": `run: --permits: "geo" is not name=number`, "geo=-1": "run: --permits: geo: must be ≥ 0"} {
		fs, parse := NewFlagSet("run", "Runs.", &out)
		fs.Var(&Pairs{Check: p.Check}, "permits", "permits by name")
		if err := parse([]string{"--permits", arg}); err == nil || err.Error() != want {
			t.Errorf("--permits %s: %v, want %q", arg, err, want)
		}
	}
	out.Reset()
	_ = parse([]string{"--help"})
	if !strings.Contains(out.String(), "  -permits string\n") {
		t.Errorf("help:\n%s\nwant -permits shown as a string", out.String())
	}
}
