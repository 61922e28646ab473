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
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/mockservice/field"
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
		return nil, typeError(path, err, reflect.TypeOf(v))
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
// not found in type pipeline.Step" becomes "F:28: requird: unknown field;
// did you mean "required"?", the fields of the type found in v, the type
// decoded into); anything else is kept as the decoder said it.
func typeError(file string, err error, v reflect.Type) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return &Error{File: file, Err: err}
	}
	var line int
	var field, typ string
	if n, _ := fmt.Sscanf(te.Errors[0], "line %d: field %s not found in type %s", &line, &field, &typ); n == 3 {
		return &Error{File: file, Line: line, Field: field, Err: errors.New("unknown field" + known(field, keys(v, typ)))}
	}
	if _, rest, ok := strings.Cut(te.Errors[0], ": "); ok {
		if n, _ := fmt.Sscanf(te.Errors[0], "line %d:", &line); n == 1 {
			return &Error{File: file, Line: line, Err: errors.New(rest)}
		}
	}
	return &Error{File: file, Err: err}
}

// known suggests, for an unknown key, the nearest of keys, or lists them
// all when none is near.
func known(key string, keys []string) string {
	if c := field.Closest(key, keys); c != "" {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	if len(keys) == 0 {
		return ""
	}
	return " (known: " + strings.Join(keys, ", ") + ")"
}

// keys are the YAML keys of the struct type named typ ("pipeline.Step")
// reachable from t through pointers, slices, maps and fields, sorted; nil
// when none is.
func keys(t reflect.Type, typ string) []string {
	seen := map[reflect.Type]bool{}
	var find func(t reflect.Type) reflect.Type
	find = func(t reflect.Type) reflect.Type {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct || seen[t] {
			return nil
		}
		seen[t] = true
		if t.String() == typ {
			return t
		}
		for i := range t.NumField() {
			if f := find(t.Field(i).Type); f != nil {
				return f
			}
		}
		return nil
	}
	found := find(t)
	if found == nil {
		return nil
	}
	var out []string
	var collect func(t reflect.Type)
	collect = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			switch {
			case name == "-":
			case strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct:
				collect(f.Type)
			case !f.IsExported():
			case name == "":
				out = append(out, strings.ToLower(f.Name))
			default:
				out = append(out, name)
			}
		}
	}
	collect(found)
	slices.Sort(out)
	return out
}
