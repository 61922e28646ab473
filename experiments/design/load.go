package design

import (
	"fmt"
	"os"

	"github.com/loadlab/loadlab/mockservice/field"
)

// Overrides change an experiment file's settings for one invocation; a
// zero field leaves the file's.
type Overrides struct {
	TimeScale float64
	Runs      int
	Records   int
	// CalibrationPairs and MaxBias, when set, replace the calibration's.
	CalibrationPairs *int
	MaxBias          *float64
}

// With is the spec with o applied, validated: an error names the field.
func (s Spec) With(o Overrides) (Spec, error) {
	if o.TimeScale != 0 {
		s.TimeScale = o.TimeScale
	}
	if o.Runs != 0 {
		s.Runs = o.Runs
		// Fewer runs than the file's calibration pairs: as many pairs as
		// runs (a quick look, exploratory: its intervals say their
		// coverage).
		if c := s.Calibration; c != nil && o.CalibrationPairs == nil && c.Pairs > s.Runs {
			clamped := *c
			clamped.Pairs = s.Runs
			s.Calibration = &clamped
		}
	}
	if o.Records != 0 {
		s.Records = o.Records
	}
	if o.CalibrationPairs != nil || o.MaxBias != nil {
		cal := s.CalibrationOf()
		if o.CalibrationPairs != nil {
			cal.Pairs = *o.CalibrationPairs
		}
		if o.MaxBias != nil {
			cal.MaxBias = *o.MaxBias
		}
		s.Calibration = &cal
	}
	return s, s.Validate()
}

// Experiment is an experiment as it will run: its file, with overrides,
// and its hypotheses with their preregistration lock.
type Experiment struct {
	Spec       Spec
	Hypotheses []Hypothesis
	Lock       Lock
	// SpecSHA256 is the hex SHA-256 of the experiment file's bytes.
	SpecSHA256 string
}

// Files reads the files an experiment names: OS reads the file system;
// an embed.FS (the files built into loadlab) reads by base name.
type Files interface {
	ReadFile(name string) ([]byte, error)
}

type osFiles struct{}

func (osFiles) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

// OS reads files from the file system, paths as given.
var OS Files = osFiles{}

// Load reads the experiment file with overrides and the hypotheses file,
// and checks the hypotheses against their lock (ErrLockMismatch when they
// no longer match it, or have none). Errors name the file, the line and
// the field, or the overridden field.
func Load(experiment, hypotheses string, o Overrides) (Experiment, error) {
	return LoadFrom(OS, OS, experiment, hypotheses, o)
}

// LoadFrom is Load with the experiment file read from ef and the
// hypotheses file and its lock from hf.
func LoadFrom(ef, hf Files, experiment, hypotheses string, o Overrides) (Experiment, error) {
	spec, err := loadSpec(ef, experiment)
	if err != nil {
		return Experiment{}, err
	}
	if spec, err = spec.With(o); err != nil {
		return Experiment{}, err
	}
	hs, err := loadHypotheses(hf, hypotheses, spec)
	if err != nil {
		return Experiment{}, err
	}
	lock, err := checkLock(hf, hypotheses)
	if err != nil {
		return Experiment{}, fmt.Errorf("refusing to judge: %w", err)
	}
	sum, err := fileSHA256(ef, experiment)
	if err != nil {
		return Experiment{}, err
	}
	return Experiment{Spec: spec, Hypotheses: hs, Lock: lock, SpecSHA256: sum}, nil
}

// Exploratory says how the experiment differs from the design its
// hypotheses were locked with, or "" when it does not.
func (e Experiment) Exploratory() string {
	if len(e.Hypotheses) == 0 {
		return ""
	}
	return Exploratory(e.Lock, e.Spec, e.Hypotheses[0].Rules)
}

// fieldError is a validation problem as an error naming its field.
func (p *problem) fieldError() error {
	return &field.Error{Field: p.at.field, Err: p.err}
}
