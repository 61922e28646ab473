package design

import (
	"errors"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/client/strategy"
	"github.com/loadlab/loadlab/mockservice/field"
	"github.com/loadlab/loadlab/mockservice/yamlfile"
)

// StrategyList is the experiment file's strategies: each a name (C1–C6,
// advised, a strategy file's name in strategy_files) or, on one's own
// pipeline, a strategy given inline as a strategy file's strategy is
// (name, records_in_flight, permits, rates, shared_permits, adaptive,
// retries), run by its name (loadSpec reads those into Spec.inline).
type StrategyList []string

// UnmarshalYAML takes each entry's name.
func (l *StrategyList) UnmarshalYAML(n *yaml.Node) error {
	names, err := entryNames(n, "strategies", "a strategy given inline needs a name", "give a name, or a strategy inline (name, records_in_flight, permits…)")
	*l = names
	return err
}

// inlineStrategy is a strategy given inline: as decoded, and where.
type inlineStrategy struct {
	strategy strategy.FileStrategy
	index    int // in strategies
}

// readInline reads, from the experiment file's document, each strategy
// given inline into s.inline, decoded as strictly as a strategy file.
func (s *Spec) readInline(root *yaml.Node) *problem {
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	list, _ := mapValue(doc, "strategies")
	if list == nil {
		return nil
	}
	for i, e := range list.Content {
		if e.Kind != yaml.MappingNode {
			continue
		}
		var f strategy.FileStrategy
		b, err := yaml.Marshal(e)
		if err == nil {
			_, err = yamlfile.Decode("", b, &f)
		}
		if err != nil {
			var ye *yamlfile.Error
			if errors.As(err, &ye) {
				err = ye.Err // its line is of the entry alone
			}
			return fail(at("strategies", i), err)
		}
		if _, dup := s.inline[f.Name]; dup {
			return failf(at("strategies", i, "name"), "%q is given twice", f.Name)
		}
		if s.inline == nil {
			s.inline = map[string]inlineStrategy{}
		}
		s.inline[f.Name] = inlineStrategy{strategy: f, index: i}
	}
	return nil
}

// loadInline checks each strategy given inline against the pipeline and
// keeps it in the results' own strategies, as a strategy file's.
func (s *Spec) loadInline() *problem {
	for name, in := range s.inline {
		if _, ok := s.StrategyFiles[name]; ok {
			return failf(at("strategies", in.index, "name"), "%q is also a strategy file's name in strategy_files: give one of them another", name)
		}
		st, err := in.strategy.Check(s.Own.Pipeline)
		if err != nil {
			l := at("strategies", in.index)
			if fe, ok := field.Of(err); ok {
				if fe.Field != "" {
					for _, part := range strings.Split(fe.Field, ".") {
						l = l.in(part)
					}
				}
				err = fe.Err
			}
			return fail(l, err)
		}
		if s.Own.Strategies == nil {
			s.Own.Strategies = map[string]strategy.Strategy{}
		}
		s.Own.Strategies[name] = st
	}
	return nil
}

// OwnStrategy is the strategy of one's own called name: a strategy
// file's or one given inline.
func (s Spec) OwnStrategy(name string) (strategy.Strategy, bool) {
	return s.Own.Strategy(name)
}
