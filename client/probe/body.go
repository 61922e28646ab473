package probe

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/loadlab/loadlab/client/pipeline"
	"github.com/loadlab/loadlab/mockservice/field"
)

// BodyFields are the fields of a body template.
type BodyFields struct {
	ID  string // unique per request: the run's random prefix and Seq
	Seq uint64 // 1, 2, … in the order requests are sent
}

// bodyMaker renders a request body. A template made only of text, {{.ID}}
// and {{.Seq}} (the usual case) is rendered by appending its parts, which
// costs a small fraction of text/template's reflection per request: the
// client's time per request is part of every step's cycle time, and at a
// 30 ms service time a millisecond of it moves the knee. Anything else is
// executed as a template.
type bodyMaker struct {
	isStatic bool
	static   []byte             // no template action: the same body each time
	parts    []bodyPart         // the fast path
	tmpl     *template.Template // the general path
	prefix   string             // of ids
}

type bodyPart struct {
	text  string
	field string // "", "ID" or "Seq"
}

func newBodyMaker(body, prefix string) (*bodyMaker, error) {
	b := &bodyMaker{prefix: prefix}
	if !strings.Contains(body, "{{") {
		b.isStatic, b.static = true, []byte(body)
		return b, nil
	}
	t, err := template.New("body").Funcs(pipeline.TemplateFuncs).Option("missingkey=error").Parse(body)
	if err != nil {
		return nil, field.Errorf("body", "%w", err)
	}
	// Render once before the first request, so that a template that cannot
	// render is bad input, not a step of errors.
	if err := t.Execute(io.Discard, BodyFields{ID: prefix + "0"}); err != nil {
		return nil, field.Errorf("body", "%w", err)
	}
	if parts, ok := simpleParts(t.Tree.Root); ok {
		b.parts = parts
	} else {
		b.tmpl = t
	}
	return b, nil
}

// simpleParts splits a template made only of text, {{.ID}} and {{.Seq}}
// into its parts; ok is false for any other template.
func simpleParts(root *parse.ListNode) (parts []bodyPart, ok bool) {
	for _, n := range root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			parts = append(parts, bodyPart{text: string(n.Text)})
		case *parse.ActionNode:
			if len(n.Pipe.Decl) > 0 || len(n.Pipe.Cmds) != 1 || len(n.Pipe.Cmds[0].Args) != 1 {
				return nil, false
			}
			f, isField := n.Pipe.Cmds[0].Args[0].(*parse.FieldNode)
			if !isField || len(f.Ident) != 1 || (f.Ident[0] != "ID" && f.Ident[0] != "Seq") {
				return nil, false
			}
			parts = append(parts, bodyPart{field: f.Ident[0]})
		default:
			return nil, false
		}
	}
	return parts, true
}

// make returns the body of request seq.
func (b *bodyMaker) make(seq uint64) ([]byte, error) {
	switch {
	case b.isStatic:
		return b.static, nil
	case b.parts != nil:
		out := make([]byte, 0, 128)
		for _, p := range b.parts {
			switch p.field {
			case "ID":
				out = strconv.AppendUint(append(out, b.prefix...), seq, 10)
			case "Seq":
				out = strconv.AppendUint(out, seq, 10)
			default:
				out = append(out, p.text...)
			}
		}
		return out, nil
	}
	var buf bytes.Buffer
	err := b.tmpl.Execute(&buf, BodyFields{ID: b.prefix + strconv.FormatUint(seq, 10), Seq: seq})
	return buf.Bytes(), err
}
