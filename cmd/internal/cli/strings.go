package cli

import (
	"fmt"
	"strings"
)

// Strings is a flag of name=text pairs (dep=URL, NAME=FILE): nil until
// given, a flag given again adding its names; a name given twice is
// refused. Form is how the refusals spell a pair ("dep=URL").
type Strings struct {
	M    map[string]string
	Form string
	text []string
}

func (s *Strings) String() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.text, ",")
}

// TakesText marks Strings as Text.
func (*Strings) TakesText() {}

func (s *Strings) Set(text string) error {
	if s.M == nil {
		s.M = map[string]string{}
	}
	form := s.Form
	if form == "" {
		form = "name=value"
	}
	for _, kv := range strings.Split(text, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || name == "" || v == "" {
			return fmt.Errorf("%q is not %s", kv, form)
		}
		if _, dup := s.M[name]; dup {
			return fmt.Errorf("%s given twice", name)
		}
		s.M[name] = v
	}
	s.text = append(s.text, text)
	return nil
}
