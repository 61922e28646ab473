package cli

import (
	"bytes"
	"errors"
	"flag"
	"testing"
	"time"
)

// An Optional flag knows whether it was given, and its help and its
// refusals read as flag's own flag of its kind.
func TestOptionalReadsAsFlagsOwn(t *testing.T) {
	declare := func(fs *flag.FlagSet, own bool) (n *Optional[int], d *Optional[time.Duration], r *Optional[float64], s *Optional[string]) {
		n, d, r, s = &Optional[int]{V: 200}, &Optional[time.Duration]{}, &Optional[float64]{V: 0.5}, &Optional[string]{V: "C4"}
		if own {
			fs.Int("records", 200, "how many")
			fs.Duration("duration", 0, "how long")
			fs.Float64("rate", 0.5, "how fast")
			fs.String("strategy", "C4", "which")
			return
		}
		fs.Var(n, "records", "how many")
		fs.Var(d, "duration", "how long")
		fs.Var(r, "rate", "how fast")
		fs.Var(s, "strategy", "which")
		return
	}
	help := map[bool]string{}
	for _, own := range []bool{true, false} {
		var out bytes.Buffer
		fs, parse := NewFlagSet("demo", "Does a demo.\n", &out)
		declare(fs, own)
		if err := parse([]string{"--help"}); !errors.Is(err, flag.ErrHelp) {
			t.Fatal(err)
		}
		help[own] = out.String()
	}
	if help[false] != help[true] {
		t.Errorf("help of Optional flags:\n%s\nflag's own:\n%s", help[false], help[true])
	}
	for _, args := range [][]string{{"--records", "x"}, {"--records", "99999999999999999999"}, {"--duration", "3"}, {"--rate", "fast"}} {
		var errs [2]string
		for i, own := range []bool{true, false} {
			fs, parse := NewFlagSet("demo", "", &bytes.Buffer{})
			declare(fs, own)
			errs[i] = parse(args).Error()
		}
		if errs[0] != errs[1] {
			t.Errorf("%v: %q, flag's own %q", args, errs[1], errs[0])
		}
	}
	fs, parse := NewFlagSet("demo", "", &bytes.Buffer{})
	n, d, r, s := declare(fs, false)
	if err := parse([]string{"--records", "0x10", "--duration", "0s"}); err != nil {
		t.Fatal(err)
	}
	if !n.Given || n.V != 16 || !d.Given || d.V != 0 || r.Given || r.V != 0.5 || s.Given || s.V != "C4" {
		t.Errorf("records %+v, duration %+v, rate %+v, strategy %+v", *n, *d, *r, *s)
	}
}
