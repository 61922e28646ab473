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

// urlsFlag is run's --call-url dep=URL[,dep=URL]: a flag given again adds
// its dependencies; one named twice is refused.
type urlsFlag struct {
	m    map[string]string
	text []string
}

func (u *urlsFlag) String() string { return strings.Join(u.text, ",") }

// TakesText marks the flag as cli.Text.
func (*urlsFlag) TakesText() {}

func (u *urlsFlag) Set(text string) error {
	if u.m == nil {
		u.m = map[string]string{}
	}
	for _, kv := range strings.Split(text, ",") {
		dep, url, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || dep == "" || url == "" {
			return fmt.Errorf("%q is not dep=URL", kv)
		}
		if _, dup := u.m[dep]; dup {
			return fmt.Errorf("%s given twice", dep)
		}
		u.m[dep] = url
	}
	u.text = append(u.text, text)
	return nil
}
