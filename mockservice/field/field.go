// Package field names the field of a configuration that an error is
// about, so that a library speaks of its own fields and a command can say
// which of its flags (or a file which of its keys) to change. A field is a
// dotted path, "records" or "strategy.permits.geo".
package field

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a problem with one field's value.
type Error struct {
	// Field is the dotted path of the field.
	Field string
	Err   error
}

func (e *Error) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error for field, its message formatted as fmt.Errorf
// does (%w wraps).
func Errorf(field, format string, a ...any) error {
	return &Error{Field: field, Err: fmt.Errorf(format, a...)}
}

// Within puts err under prefix: an *Error's field becomes
// "prefix.field", any other error becomes the field prefix's. A nil err
// stays nil.
func Within(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return &Error{Field: prefix + "." + fe.Field, Err: fe.Err}
	}
	return &Error{Field: prefix, Err: err}
}

// Of returns the field err is about, and whether it is about one.
func Of(err error) (*Error, bool) {
	var fe *Error
	ok := errors.As(err, &fe)
	return fe, ok
}

// Is says whether err is about field name (a *Error of that field, or
// wrapping one).
func Is(err error, name string) bool {
	fe, ok := Of(err)
	return ok && fe.Field == name
}

// Names maps fields to what a user types for them (a command's flags):
// a field is named by the longest dotted prefix of it in the map.
type Names map[string]string

// Name is what the user types for field, and the rest of the field's path
// below the prefix the map names ("" when the map names the field whole);
// name is "" when the map has no prefix of field.
func (n Names) Name(field string) (name, rest string) {
	for f := field; f != ""; {
		if name, ok := n[f]; ok {
			return name, strings.TrimPrefix(strings.TrimPrefix(field, f), ".")
		}
		i := strings.LastIndexByte(f, '.')
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return "", ""
}

// Rename returns err with its field named as the user types it
// ("--max-rate: 0 must be > 0" for the field max_rate; "--retries:
// attempts: 0 must be ≥ 1" for retries.attempts when only retries is
// named), or err unchanged when it is about no field the map names.
func (n Names) Rename(err error) error {
	fe, ok := Of(err)
	if !ok {
		return err
	}
	name, rest := n.Name(fe.Field)
	if name == "" {
		return err
	}
	if rest != "" {
		name += ": " + rest
	}
	return &renamed{name: name, err: fe}
}

// renamed is an *Error as the user names its field.
type renamed struct {
	name string
	err  *Error
}

func (r *renamed) Error() string { return r.name + ": " + r.err.Err.Error() }

func (r *renamed) Unwrap() error { return r.err }
