package runcmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/loadlab/loadlab/client/records"
)

// phasesFlag is run's --phases name=D,name=D,...
type phasesFlag struct {
	list []records.Phase
	text string
}

func (p *phasesFlag) String() string { return p.text }

// TakesText marks the flag as cli.Text.
func (*phasesFlag) TakesText() {}

func (p *phasesFlag) Set(text string) error {
	var list []records.Phase
	for _, kv := range strings.Split(text, ",") {
		name, d, ok := strings.Cut(strings.TrimSpace(kv), "=")
		dur, err := time.ParseDuration(d)
		if !ok || err != nil {
			return fmt.Errorf("%q is not name=duration (e.g. before=10s)", kv)
		}
		list = append(list, records.Phase{Name: name, Duration: dur})
	}
	p.list, p.text = list, text
	return nil
}

// startFlag is run's --start-at, an RFC 3339 time.
type startFlag struct{ t time.Time }

func (s *startFlag) String() string {
	if s.t.IsZero() {
		return ""
	}
	return s.t.Format(time.RFC3339Nano)
}

// TakesText marks the flag as cli.Text.
func (*startFlag) TakesText() {}

func (s *startFlag) Set(text string) error {
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return fmt.Errorf("%q is not an RFC 3339 time (e.g. 2026-12-01T10:00:00.123456789Z)", text)
	}
	s.t = t
	return nil
}
