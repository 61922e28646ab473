package yamlfile

import (
	"strings"
	"testing"
)

type inner struct {
	Required bool   `yaml:"required"`
	Method   string `yaml:"method"`
}

type common struct {
	Name string `yaml:"name"`
}

type outer struct {
	common `yaml:",inline"`
	Steps  []inner `yaml:"steps"`
	Hidden string  `yaml:"-"`
}

func TestUnknownFieldSaysWhatIsKnown(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"a near key", "steps:\n  - method: GET\n    requird: true\n", `f.yaml:3: requird: unknown field; did you mean "required"?`},
		{"a far key", "steps:\n  - colour: red\n", `f.yaml:2: colour: unknown field (known: method, required)`},
		{"an inline struct's keys are the outer's", "nme: x\n", `f.yaml:1: nme: unknown field; did you mean "name"?`},
		{"a field kept out of YAML is not offered", "zzzzzz: 1\n", `f.yaml:1: zzzzzz: unknown field (known: name, steps)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var v outer
			_, err := Decode("f.yaml", []byte(c.in), &v)
			if err == nil || err.Error() != c.want {
				t.Errorf("got %v, want %s", err, c.want)
			}
		})
	}
}

func TestOtherDecodeErrorsKeepTheirLine(t *testing.T) {
	var v outer
	_, err := Decode("f.yaml", []byte("steps:\n  - required: maybe\n"), &v)
	if err == nil || !strings.HasPrefix(err.Error(), "f.yaml:2:") {
		t.Errorf("got %v, want an error at f.yaml:2", err)
	}
}
