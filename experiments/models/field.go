package models

import "fmt"

// FieldError is a bad parameter of a scenario. Field is the parameter's
// JSON key ("service_time_s"); Err says what is wrong with its value.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// fieldErrorf returns a *FieldError for field, its message formatted as
// fmt.Errorf does.
func fieldErrorf(field, format string, a ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, a...)}
}
