package comparecmd

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// match checks that before and after can be compared — one kind of
// results, one experiment, one configuration a side — and says what
// changed between them (their configurations' differences). It names
// the cells of runs outside an experiment alike on both sides.
func match(before, after *input) ([]string, error) {
	if before.source != after.source {
		return nil, fmt.Errorf("before (%s) holds %s results, after (%s) %s results: compare like with like",
			before.arg, before.source, after.arg, after.source)
	}
	if before.source == fromResults {
		if before.experiment != after.experiment {
			return nil, fmt.Errorf("different experiments: before (%s) is %q, after (%s) %q",
				before.arg, before.experiment, after.arg, after.experiment)
		}
		if before.sha256 != after.sha256 {
			return []string{"the experiment files differ (SHA-256 " + short(before.sha256) + " → " + short(after.sha256) + ")"}, nil
		}
		return nil, nil
	}
	for _, in := range []*input{before, after} {
		if len(in.configs) > 1 {
			return nil, mixed(in)
		}
	}
	b, a := only(before.configs), only(after.configs)
	nb, na := before.side.Cells[0].Name, after.side.Cells[0].Name
	if nb != na {
		name := nb + " → " + na
		before.side.Cells[0].Name, after.side.Cells[0].Name = name, name
	}
	return differences(b, a), nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// only is the one configuration of configs.
func only(configs map[string][]string) string {
	for k := range configs {
		return k
	}
	return ""
}

// mixed is the error of a side whose runs ran different configurations:
// how they differ, and which files ran each.
func mixed(in *input) error {
	keys := slices.Sorted(maps.Keys(in.configs))
	var files []string
	for i, k := range keys {
		files = append(files, fmt.Sprintf("configuration %d: %s", i+1, strings.Join(in.configs[k], ", ")))
	}
	return fmt.Errorf("%s holds runs of %d configurations (%s; 1 → 2: %s): give one configuration a side",
		in.arg, len(keys), strings.Join(files, "; "), strings.Join(differences(keys[0], keys[1]), ", "))
}

// differences lists how configuration a differs from b, field by field:
// "strategy.permits.records: 6 → 3".
func differences(b, a string) []string {
	fb, fa := flatten(b), flatten(a)
	keys := slices.Sorted(maps.Keys(fb))
	for k := range fa {
		if _, ok := fb[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		vb, okB := fb[k]
		va, okA := fa[k]
		if okB && okA && vb == va {
			continue
		}
		if !okB {
			vb = "none"
		}
		if !okA {
			va = "none"
		}
		out = append(out, fmt.Sprintf("%s: %s → %s", k, vb, va))
	}
	return out
}

// flatten is a JSON object's leaves by dotted path.
func flatten(text string) map[string]string {
	var v any
	json.Unmarshal([]byte(text), &v)
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			b, _ := json.Marshal(v)
			out[prefix] = string(b)
			return
		}
		for k, x := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			walk(p, x)
		}
	}
	walk("", v)
	return out
}
