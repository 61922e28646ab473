// Package yamlfile reads YAML files strictly and locates their fields, so
// that an error names the file, the line and the field. Pure: anything may
// import it.
package yamlfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is a problem in a YAML file, with where it is.
type Error struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %v", loc, e.Field, e.Err)
	}
	return fmt.Sprintf("%s: %v", loc, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Read decodes path strictly into v and returns the document's node tree
// for locating fields in later errors.
func Read(path string, v any) (*yaml.Node, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Err: err}
	}
	return Decode(path, data, v)
}

// Decode decodes data, named file in errors, strictly into v and returns
// the document's node tree.
func Decode(file string, data []byte, v any) (*yaml.Node, error) {
	path := file
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &Error{File: path, Err: err}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return nil, typeError(path, err)
	}
	return &root, nil
}

// Line finds the line of a field path (string keys and int indexes) in a
// YAML document; it returns the line of the deepest part found.
func Line(root *yaml.Node, path ...any) int {
	n := root
	if n == nil {
		return 0
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, p := range path {
		switch k := p.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return line
			}
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					line, n, found = n.Content[i].Line, n.Content[i+1], true
					break
				}
			}
			if !found {
				return line
			}
		case int:
			if n.Kind != yaml.SequenceNode || k >= len(n.Content) {
				return line
			}
			n = n.Content[k]
			line = n.Line
		}
	}
	return line
}

// typeError turns the decoder's first complaint into file:line: field:
// problem, in the words of every other error here ("line 28: field requird
// not found in type pipeline.Step" becomes "F:28: requird: unknown field");
// anything else is kept as the decoder said it.
func typeError(file string, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return &Error{File: file, Err: err}
	}
	var line int
	var field, typ string
	if n, _ := fmt.Sscanf(te.Errors[0], "line %d: field %s not found in type %s", &line, &field, &typ); n == 3 {
		return &Error{File: file, Line: line, Field: field, Err: errors.New("unknown field")}
	}
	if _, rest, ok := strings.Cut(te.Errors[0], ": "); ok {
		if n, _ := fmt.Sscanf(te.Errors[0], "line %d:", &line); n == 1 {
			return &Error{File: file, Line: line, Err: errors.New(rest)}
		}
	}
	return &Error{File: file, Err: err}
}
