// Package schemacheck checks a tool's input schema against the rules each model
// vendor documents for function (tool) schemas, so a test can show that every tool
// the hub lists is one each vendor's API accepts. Each checker encodes one vendor's
// documented rules and cites them; it reports every place a schema breaks one.
//
// Start from [Checker] with its [Rules], and [Tools]; a [Violation] names the rule a
// schema breaks.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Violation is one place a schema breaks a vendor's rule.
type Violation struct {
	Path string // JSON pointer of the subschema at fault ("" for the root)
	Rule string // what the rule asks
}

func (v Violation) String() string { return fmt.Sprintf("%s: %s", orRoot(v.Path), v.Rule) }

func orRoot(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

// Checker checks one input schema.
type Checker func(schema json.RawMessage) []Violation

// node is one subschema met in a walk.
type node struct {
	path  string
	s     map[string]any
	depth int  // the objects it is nested in, the root's properties at 1
	root  bool // the input schema itself
}

// decode reads a schema, numbers kept as written.
func decode(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var s map[string]any
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	return s, nil
}

// walk calls fn on the schema and every subschema in it, $defs and definitions
// included, parents first.
func walk(root map[string]any, fn func(n node)) {
	var visit func(n node)
	visit = func(n node) {
		fn(n)
		s := n.s
		childDepth := n.depth
		if _, ok := s["properties"].(map[string]any); ok || s["type"] == "object" {
			childDepth++
		}
		if props, ok := s["properties"].(map[string]any); ok {
			for _, k := range sortedKeys(props) {
				if ps, ok := props[k].(map[string]any); ok {
					visit(node{path: n.path + "/properties/" + k, s: ps, depth: childDepth})
				}
			}
		}
		for _, k := range []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"} {
			if sub, ok := s[k].(map[string]any); ok {
				visit(node{path: n.path + "/" + k, s: sub, depth: childDepth})
			}
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
			if list, ok := s[k].([]any); ok {
				for i, item := range list {
					if sub, ok := item.(map[string]any); ok {
						visit(node{path: fmt.Sprintf("%s/%s/%d", n.path, k, i), s: sub, depth: n.depth})
					}
				}
			}
		}
		for _, k := range []string{"$defs", "definitions", "patternProperties"} {
			if defs, ok := s[k].(map[string]any); ok {
				for _, name := range sortedKeys(defs) {
					if d, ok := defs[name].(map[string]any); ok {
						visit(node{path: n.path + "/" + k + "/" + name, s: d, depth: n.depth})
					}
				}
			}
		}
	}
	visit(node{s: root, root: true})
}

// unknownKeys lists the schema's keywords outside allowed, sorted.
func unknownKeys(s map[string]any, allowed []string) []string {
	var out []string
	for k := range s {
		if !slices.Contains(allowed, k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// types lists the schema's type keyword as a list.
func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}

// requiresAll checks an object lists every property in required.
func requiresAll(n node, add func(n node, rule string)) {
	props, ok := n.s["properties"].(map[string]any)
	if !ok {
		return
	}
	required, _ := n.s["required"].([]any)
	var missing []string
	for _, k := range sortedKeys(props) {
		if !slices.Contains(required, any(k)) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		add(n, "every property must be in required; missing "+strings.Join(missing, ", "))
	}
}

// recursive reports whether a local reference is met again while it is followed.
func recursive(root map[string]any) bool {
	var follow func(v any, seen []string) bool
	follow = func(v any, seen []string) bool {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
				if slices.Contains(seen, ref) {
					return true
				}
				if target := pointer(root, ref); target != nil && follow(target, append(seen, ref)) {
					return true
				}
			}
			for k, e := range x {
				if k == "$defs" || k == "definitions" {
					continue
				}
				if follow(e, seen) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if follow(e, seen) {
					return true
				}
			}
		}
		return false
	}
	return follow(root, nil)
}

// pointer resolves a local JSON pointer reference, nil when it leads nowhere.
func pointer(root map[string]any, ref string) any {
	var cur any = root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// check runs fn over every subschema and collects what it adds.
func check(raw json.RawMessage, fn func(root map[string]any, n node, add func(n node, rule string))) []Violation {
	root, err := decode(raw)
	if err != nil {
		return []Violation{{Rule: "not a JSON object: " + err.Error()}}
	}
	var out []Violation
	add := func(n node, rule string) { out = append(out, Violation{Path: n.path, Rule: rule}) }
	walk(root, func(n node) { fn(root, n, add) })
	return out
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
