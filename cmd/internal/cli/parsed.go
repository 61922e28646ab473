package cli

import "fmt"

// Parsed is a Text flag of a form of its own (--segment's "i/n",
// --start-at's time, --seeds' "FROM-TO"), read into the value it is bound
// to as it is given: a bad value is refused then, naming the flag
// ("--start-at: WHY", WHY the parse's error). Help shows its default's
// text; a flag whose default is no text, given empty, keeps the value it
// was bound with, as if not given.
type Parsed[T any] struct {
	to    *T
	bound T
	def   string
	parse func(string) (T, error)
	text  string
	// Given: the flag was given.
	Given bool
	// ValueFirst: the parse's refusals begin with the value, quoted, and
	// follow the flag's name without a colon (`--shard "3/2": the index …`).
	ValueFirst bool
}

// Parse binds a Parsed flag to *to, read with parse; def is its default's
// text, read into *to now unless empty. A default that parse refuses is
// the program's mistake: Parse panics.
func Parse[T any](to *T, def string, parse func(string) (T, error)) *Parsed[T] {
	if def != "" {
		v, err := parse(def)
		if err != nil {
			panic(fmt.Sprintf("cli: default %q: %v", def, err))
		}
		*to = v
	}
	return &Parsed[T]{to: to, bound: *to, def: def, parse: parse}
}

// String is the text given, or the default's.
func (p *Parsed[T]) String() string {
	switch {
	case p == nil:
		return ""
	case p.Given:
		return p.text
	}
	return p.def
}

// TakesText marks Parsed as Text.
func (*Parsed[T]) TakesText() {}

// Set reads text into the bound value.
func (p *Parsed[T]) Set(text string) error {
	v := p.bound
	if text != "" || p.def != "" {
		var err error
		if v, err = p.parse(text); err != nil {
			return err
		}
	}
	*p.to, p.text, p.Given = v, text, true
	return nil
}

func (p *Parsed[T]) valueFirst() bool { return p.ValueFirst }
