package records

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/loadlab/loadlab/budgets"
)

// ErrorKind is how a call ended in an error: a transport failure of one
// of the kinds below, an unexpected status (StatusKind), or a template
// that did not render for the record (TemplateKind).
type ErrorKind string

// Transport failures.
const (
	TransportError   ErrorKind = "transport error"
	ConnRefused      ErrorKind = "connection refused"
	ConnReset        ErrorKind = "connection reset"
	ClosedUnanswered ErrorKind = "connection closed without an answer"
)

// StatusKind is the kind of a call answered with an unexpected status.
func StatusKind(status int) ErrorKind { return ErrorKind(fmt.Sprintf("status %d", status)) }

// TemplateKind is the kind of a call whose request could not be rendered.
func TemplateKind(err error) ErrorKind { return ErrorKind("template: " + err.Error()) }

// kindOf is the kind of a call the budget classed an Error, and false for
// a call the run's interruption ended (not the dependency's error).
func kindOf(res budgets.Result) (ErrorKind, bool) {
	switch {
	case res.Status != 0:
		return StatusKind(res.Status), true
	case errors.Is(res.Err, syscall.ECONNREFUSED):
		return ConnRefused, true
	case errors.Is(res.Err, syscall.ECONNRESET):
		return ConnReset, true
	case errors.Is(res.Err, io.EOF), errors.Is(res.Err, io.ErrUnexpectedEOF):
		return ClosedUnanswered, true
	case errors.Is(res.Err, context.Canceled):
		return "", false
	}
	return TransportError, true
}

// ErrorKey is a dependency and a kind of error: a key of
// Result.ErrorKinds, written "dependency: kind" (a dependency's name has
// no spaces).
type ErrorKey struct {
	Dependency string
	Kind       ErrorKind
}

func (k ErrorKey) String() string { return k.Dependency + ": " + string(k.Kind) }

// MarshalText writes the key as "dependency: kind".
func (k ErrorKey) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (k *ErrorKey) UnmarshalText(b []byte) error {
	dep, kind, ok := strings.Cut(string(b), ": ")
	if !ok || dep == "" {
		return fmt.Errorf("records: error kind %q is not \"dependency: kind\"", b)
	}
	*k = ErrorKey{Dependency: dep, Kind: ErrorKind(kind)}
	return nil
}
