// Package cli holds what every loadlab command line shares: exit codes
// and the errors that carry them, flag sets whose help teaches (purpose,
// examples, flags in groups) and whose errors point (the flag, "did you
// mean"), and checks of URL flags.
package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/mockservice/field"
)

// Exit codes, the same for every command.
const (
	ExitFailed      = 1   // the command ran, and records, requests or runs failed
	ExitUsage       = 2   // bad input, or a target unfit for the command: nothing sent
	ExitInterrupted = 130 // SIGINT or SIGTERM: what was measured is written, marked partial
)

// ExitError carries an exit code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }

func (e *ExitError) Unwrap() error { return e.Err }

// UsageErr is bad input: exit 2, nothing sent.
func UsageErr(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

// Interrupted is the error of a command stopped by a signal after it
// printed what it measured, marked partial, and wrote it to written (""
// when it wrote no file): err says what was done.
func Interrupted(err error, written string) error {
	if written == "" {
		return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted: %w; what was measured is printed, marked partial", err)}
	}
	return &ExitError{Code: ExitInterrupted, Err: fmt.Errorf("interrupted: %w; partial results written to %s", err, written)}
}

// OneLine folds a multi-line error (YAML's, say) into the one line every
// error of loadlab is.
func OneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

// Group names flags shown together in a command's help, in the order
// given; flags in no group are shown last, under "Other".
type Group struct {
	Name  string
	Flags []string
}

// NewFlagSet returns a flag set that reports errors through the caller, in
// one line naming the flag (with "did you mean" for a typo of one), and
// prints help to stdout only when asked: "Usage: loadlab NAME [flags]",
// the synopsis, then the flags in groups.
func NewFlagSet(name, synopsis string, stdout io.Writer, groups ...Group) (*flag.FlagSet, func([]string) error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	parse := func(args []string) error {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: loadlab %s [flags]\n\n%s\n", name, synopsis)
			printFlags(stdout, fs, groups)
			return err
		}
		if err != nil {
			return UsageErr("%s: %v%s", name, textFlagError(fs, err), flagHint(fs, err))
		}
		if fs.NArg() > 0 {
			return UsageErr("%s: unexpected argument %q", name, fs.Arg(0))
		}
		return nil
	}
	return fs, parse
}

// printFlags prints fs's flags as flag.PrintDefaults does, group by group;
// the flags of no group come last, under "Other flags" (all of them under
// "Flags" when there are no groups).
func printFlags(w io.Writer, fs *flag.FlagSet, groups []Group) {
	placed := map[string]bool{}
	for _, g := range groups {
		for _, n := range g.Flags {
			placed[n] = true
		}
	}
	var other []string
	fs.VisitAll(func(f *flag.Flag) {
		if !placed[f.Name] {
			other = append(other, f.Name)
		}
	})
	if len(other) > 0 {
		name := "Other flags"
		if len(groups) == 0 {
			name = "Flags"
		}
		groups = append(groups, Group{Name: name, Flags: other})
	}
	for _, g := range groups {
		sub := flag.NewFlagSet(g.Name, flag.ContinueOnError)
		sub.SetOutput(w)
		for _, n := range g.Flags {
			f := fs.Lookup(n)
			if f == nil {
				continue
			}
			d, declares := f.Value.(declarer)
			switch {
			case declares:
				d.declare(sub, f)
			case isText(f.Value):
				sub.String(f.Name, f.DefValue, f.Usage)
			default:
				sub.Var(f.Value, f.Name, f.Usage)
				sub.Lookup(f.Name).DefValue = f.DefValue
			}
		}
		fmt.Fprintf(w, "%s:\n", g.Name)
		sub.PrintDefaults()
		fmt.Fprintln(w)
	}
}

// Text is a flag.Value that takes text of its own form (Pairs, --adaptive's
// specs): help shows it as "string", not flag's "value".
type Text interface {
	flag.Value
	TakesText()
}

// textFlagError is flag's "invalid value V for flag -NAME: WHY" as
// "--NAME: WHY" when NAME is a Text flag, whose WHY names the value
// already (as the errors found after parsing name their flag), or as
// "--NAME WHY" when WHY begins with the value (a Parsed flag's
// ValueFirst); err as it is otherwise.
func textFlagError(fs *flag.FlagSet, err error) error {
	m := invalidValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	f := fs.Lookup(m[1])
	if f == nil || !isText(f.Value) {
		return err
	}
	if vf, ok := f.Value.(interface{ valueFirst() bool }); ok && vf.valueFirst() {
		return fmt.Errorf("--%s %s", m[1], m[2])
	}
	return fmt.Errorf("--%s: %s", m[1], m[2])
}

// invalidValue is how package flag words a value that Set refused.
var invalidValue = regexp.MustCompile(`(?s)^invalid value ".*" for flag -([\w-]+): (.*)$`)

func isText(v flag.Value) bool {
	_, ok := v.(Text)
	return ok
}

// flagHint is "; did you mean --records?" for a flag fs lacks that is a
// typo of one it has.
func flagHint(fs *flag.FlagSet, err error) string {
	const undefined = "flag provided but not defined: "
	msg := err.Error()
	if !strings.HasPrefix(msg, undefined) {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if c := field.Closest(strings.TrimLeft(strings.TrimPrefix(msg, undefined), "-"), names); c != "" {
		return fmt.Sprintf("; did you mean --%s?", c)
	}
	return ""
}

// CheckURL refuses a URL flag's value that cannot be what the user meant,
// saying the fix: no scheme (add http://), or a template (sent as is:
// templates are expanded in bodies and pipeline paths only).
func CheckURL(command, flagName, value string) error {
	switch {
	case value == "":
		return nil
	case strings.Contains(value, "{{"):
		return UsageErr("%s: %s %q: a template in the URL is sent as is, not expanded (templates work in --body, and in a pipeline's paths)", command, flagName, value)
	case !strings.Contains(value, "://"):
		return UsageErr("%s: %s %q has no scheme: did you mean http://%s?", command, flagName, value, value)
	}
	return nil
}

// Suggest is "; did you mean \"experiment\"?" for a mistyped command.
func Suggest(name string, commands []string) string {
	if c := field.Closest(name, commands); c != "" && !slices.Contains(commands, name) {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}

// Pairs is a flag.Value of name=number pairs, comma-separated (e.g.
// --permits geo=8,ledger=6): M is nil until the flag is given, and a
// flag given again adds its pairs, key by key. Check, when set, refuses a
// number for its name.
type Pairs struct {
	M     map[string]float64
	Check func(name string, v float64) error
}

func (p *Pairs) String() string {
	if p == nil || p.M == nil {
		return ""
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(p.M)) {
		kv = append(kv, k+"="+strconv.FormatFloat(p.M[k], 'g', -1, 64))
	}
	return strings.Join(kv, ",")
}

// TakesText marks Pairs as Text.
func (*Pairs) TakesText() {}

// Set reads text's pairs into M; an error names the pair or the name.
func (p *Pairs) Set(text string) error {
	if p.M == nil {
		p.M = map[string]float64{}
	}
	for _, kv := range strings.Split(text, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || k == "" || err != nil {
			return fmt.Errorf("%q is not name=number", kv)
		}
		if p.Check != nil {
			if err := p.Check(k, x); err != nil {
				return fmt.Errorf("%s: %v", k, err)
			}
		}
		p.M[k] = x
	}
	return nil
}

// WriteJSON writes v to w as indented JSON, as every command's --json does.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
