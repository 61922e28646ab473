package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// A Parsed flag reads its default into the value it is bound to, a value
// given as it is parsed, and refuses a bad one then, naming the flag; its
// help reads as a string flag's with the same default.
func TestParsedFlag(t *testing.T) {
	half := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n%2 != 0 {
			return 0, fmt.Errorf("%q is not an even number", s)
		}
		return n / 2, nil
	}
	declare := func(fs *flag.FlagSet) (a, b *int, pa, pb *Parsed[int]) {
		a, b = new(int), new(int)
		*b = 7
		pa, pb = Parse(a, "8", half), Parse(b, "", half)
		fs.Var(pa, "even", "an even number, halved")
		fs.Var(pb, "part", "another")
		pb.ValueFirst = true
		return a, b, pa, pb
	}
	fs, parse := NewFlagSet("demo", "", &bytes.Buffer{})
	a, b, pa, pb := declare(fs)
	if *a != 4 || *b != 7 || pa.Given || pa.String() != "8" || pb.String() != "" {
		t.Errorf("bound: even %d %q, part %d %q", *a, pa, *b, pb)
	}
	if err := parse([]string{"--even", "10", "--part", "2"}); err != nil || *a != 5 || *b != 1 || !pa.Given || pa.String() != "10" {
		t.Errorf("given: even %d %q, part %d, %v", *a, pa, *b, err)
	}
	// Given empty, a flag of no default keeps its bound value; one with a
	// default reads the empty text as any other.
	if err := pb.Set(""); err != nil || *b != 7 {
		t.Errorf("part given empty: %d, %v", *b, err)
	}
	if err := pa.Set(""); err == nil {
		t.Errorf("even given empty: accepted, %d", *a)
	}
	for args, want := range map[string]string{
		"--even 3": `demo: --even: "3" is not an even number`,
		"--part x": `demo: --part "x" is not an even number`,
	} {
		fs, parse := NewFlagSet("demo", "", &bytes.Buffer{})
		declare(fs)
		if err := parse(strings.Fields(args)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	help := func(own bool) string {
		var out bytes.Buffer
		fs, parse := NewFlagSet("demo", "Does a demo.\n", &out)
		if own {
			fs.String("even", "8", "an even number, halved")
			fs.String("part", "", "another")
		} else {
			declare(fs)
		}
		if err := parse([]string{"--help"}); !errors.Is(err, flag.ErrHelp) {
			t.Fatal(err)
		}
		return out.String()
	}
	if got, want := help(false), help(true); got != want {
		t.Errorf("help of Parsed flags:\n%s\nstring flags':\n%s", got, want)
	}
}
