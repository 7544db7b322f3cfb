package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// schema is a JSON Schema as decoded JSON, for the checks a definition can get before
// it runs: which fields exist and what type they are. Anything it cannot follow
// ($ref, anyOf, …) is unknown, and unknown is never a problem.
type schema map[string]any

func parseSchema(raw json.RawMessage) schema {
	var s schema
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return s
}

// followable reports whether the checks can read this schema's shape.
func (s schema) followable() bool {
	if s == nil {
		return false
	}
	for _, k := range []string{"$ref", "anyOf", "oneOf", "allOf"} {
		if _, ok := s[k]; ok {
			return false
		}
	}
	return true
}

// types lists the JSON types the schema allows (none when it does not say).
func (s schema) types() []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if str, ok := e.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

func (s schema) properties() map[string]any {
	p, _ := s["properties"].(map[string]any)
	return p
}

// closed reports whether the schema refuses properties it does not list.
func (s schema) closed() bool {
	ap, ok := s["additionalProperties"]
	if !ok {
		return false
	}
	b, isBool := ap.(bool)
	return isBool && !b
}

// listsFields reports whether the schema says what fields an object has: an output
// schema reflected from a struct, for one (an open schema with no properties says
// nothing).
func (s schema) listsFields() bool {
	if len(s.properties()) == 0 {
		return false
	}
	ap, ok := s["additionalProperties"]
	if !ok {
		return true
	}
	b, isBool := ap.(bool)
	return isBool && !b
}

func (s schema) required() []string {
	var out []string
	if r, ok := s["required"].([]any); ok {
		for _, e := range r {
			if str, ok := e.(string); ok {
				out = append(out, str)
			}
		}
	}
	return out
}

// at follows a field path; msg says why the path does not exist ("" when it does or
// when the schema cannot say). sub is nil when it is unknown.
func (s schema) at(path []string) (sub schema, known bool, msg string) {
	cur := s
	for i, seg := range path {
		if !cur.followable() {
			return nil, false, ""
		}
		if ts := cur.types(); len(ts) > 0 && !slices.Contains(ts, "object") {
			return nil, false, fmt.Sprintf("%s is %s, which has no field %s", describePath(path[:i]), strings.Join(ts, " or "), seg)
		}
		props := cur.properties()
		p, ok := props[seg]
		if !ok {
			if cur.listsFields() {
				return nil, false, fmt.Sprintf("there is no field %s; the fields are %s", seg, strings.Join(sortedKeys(props), ", "))
			}
			return nil, false, ""
		}
		cur, _ = p.(map[string]any)
	}
	return cur, cur != nil, ""
}

func describePath(p []string) string {
	if len(p) == 0 {
		return "the value"
	}
	return strings.Join(p, ".")
}

// fits reports whether a value of JSON type got may go where the schema wants one of
// its types (an integer fits a number).
func (s schema) fits(got string) bool {
	want := s.types()
	if len(want) == 0 || got == "" {
		return true
	}
	for _, w := range want {
		if w == got || (w == "number" && got == "integer") {
			return true
		}
	}
	return false
}
