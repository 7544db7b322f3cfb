package providers

import (
	"bytes"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// sharedMin is the size from which a subschema an input repeats is said once, under
// $defs: below it a reference saves little and makes the schema harder to read.
const sharedMin = 200

// maxShared bounds how many subschemas one input shares.
const maxShared = 64

// refCost is about what a reference costs in place of a subschema
// ({"$ref":"#/$defs/"} and its name).
const refCost = 24

// refers reports whether a schema has references or definitions of its own, which
// moving its subschemas could break; such a schema is listed without sharing.
func refers(raw json.RawMessage) bool {
	for _, k := range []string{`"$ref"`, `"$defs"`, `"definitions"`, `"$id"`, `"$anchor"`, `"$dynamicRef"`, `"$dynamicAnchor"`} {
		if bytes.Contains(raw, []byte(k)) {
			return true
		}
	}
	return false
}

// repeat is one subschema the input holds more than once: where it is, by the
// property names it sits under.
type repeat struct {
	text  string
	names []string
	count int
}

// shareRepeats says once, under $defs at the root, each subschema of sharedMin bytes or
// more that the input repeats whole, and puts a reference in each place it was: the
// largest saving first, until no repeat saves anything. The schema validates exactly
// what it did.
func shareRepeats(root map[string]any) { shareRepeatsFrom(root, sharedMin) }

// shareRepeatsFrom is shareRepeats for subschemas of min bytes or more.
func shareRepeatsFrom(root map[string]any, min int) {
	defs := map[string]any{}
	for len(defs) < maxShared {
		best := largestRepeat(root, defs, min)
		if best == nil {
			break
		}
		name := defName(best.names, defs)
		dec := json.NewDecoder(strings.NewReader(best.text))
		dec.UseNumber()
		var def any
		_ = dec.Decode(&def) // it was marshaled from a schema
		defs[name] = def
		ref := "#/$defs/" + name
		replaceRepeats(root, best.text, ref)
		for _, d := range defs {
			if ds, ok := d.(map[string]any); ok {
				replaceRepeats(ds, best.text, ref)
			}
		}
	}
	if len(defs) > 0 {
		root["$defs"] = defs
	}
}

// largestRepeat finds the repeated subschema whose sharing saves the most bytes, nil
// when none saves any.
func largestRepeat(root map[string]any, defs map[string]any, min int) *repeat {
	seen := map[string]*repeat{}
	var order []*repeat
	var visit func(s map[string]any, name string, isRoot bool)
	visit = func(s map[string]any, name string, isRoot bool) {
		if !isRoot {
			if text, err := json.Marshal(s); err == nil && len(text) >= min {
				r := seen[string(text)]
				if r == nil {
					r = &repeat{text: string(text)}
					seen[r.text] = r
					order = append(order, r)
				}
				r.count++
				r.names = append(r.names, name)
			}
		}
		eachSubschema(s, name, func(sub map[string]any, subName string) { visit(sub, subName, false) })
	}
	visit(root, "", true)
	for _, name := range sortedKeys(defs) {
		if d, ok := defs[name].(map[string]any); ok {
			visit(d, name, true)
		}
	}
	var best *repeat
	bestSaving := 0
	for _, r := range order {
		if r.count < 2 {
			continue
		}
		saving := (r.count-1)*len(r.text) - r.count*refCost
		if saving > bestSaving {
			best, bestSaving = r, saving
		}
	}
	return best
}

// replaceRepeats puts a reference in place of each subschema of s (not s itself) whose
// JSON is text.
func replaceRepeats(s map[string]any, text, ref string) {
	replace := func(sub map[string]any) (map[string]any, bool) {
		if b, err := json.Marshal(sub); err == nil && string(b) == text {
			return map[string]any{"$ref": ref}, true
		}
		replaceRepeats(sub, text, ref)
		return nil, false
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			if ps, ok := p.(map[string]any); ok {
				if r, ok := replace(ps); ok {
					props[name] = r
				}
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if sub, ok := s[k].(map[string]any); ok {
			if r, ok := replace(sub); ok {
				s[k] = r
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if list, ok := s[k].([]any); ok {
			for i, item := range list {
				if sub, ok := item.(map[string]any); ok {
					if r, ok := replace(sub); ok {
						list[i] = r
					}
				}
			}
		}
	}
}

// eachSubschema calls fn on each schema nested directly in s, in a fixed order, with the
// property name it sits under (an item or a branch keeps its parent's).
func eachSubschema(s map[string]any, name string, fn func(sub map[string]any, name string)) {
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range sortedKeys(props) {
			if ps, ok := props[p].(map[string]any); ok {
				fn(ps, p)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if sub, ok := s[k].(map[string]any); ok {
			fn(sub, name)
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if list, ok := s[k].([]any); ok {
			for _, item := range list {
				if sub, ok := item.(map[string]any); ok {
					fn(sub, name)
				}
			}
		}
	}
}

var notInDefName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// defName names a shared subschema for the places it was: the words their property
// names end with in common (allowed_categories and blocked_categories share
// "categories"), else the first one's name; unique among defs.
func defName(names []string, defs map[string]any) string {
	common := strings.Split(names[0], "_")
	for _, n := range names[1:] {
		words := strings.Split(n, "_")
		i := 0
		for i < len(common) && i < len(words) && common[len(common)-1-i] == words[len(words)-1-i] {
			i++
		}
		common = common[len(common)-i:]
	}
	base := strings.Join(common, "_")
	if base == "" {
		base = names[0]
	}
	base = strings.Trim(notInDefName.ReplaceAllString(base, "_"), "_")
	if base == "" {
		base = "shared"
	}
	name := base
	for i := 2; defs[name] != nil; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	return name
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
