package providertest

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// MinimalResponse returns the least answer the upstream's description allows for the
// operation's status: every required property and nothing else, null wherever a
// required property is nullable, empty arrays, the first value of an enum or of a
// oneOf, zero or the minimum for numbers, and for strings the shortest non-empty one (of the pattern, when there is one)
// (an upstream never sends an empty id or SHA; the zero values of every output are
// validated by TestMinimalOutputsMatchTheirSchemas in providers/all). An operation must turn such an answer into
// structuredContent its own output schema accepts: optional means omitted, and a
// zero value must not stand in for a field the upstream left out. The answer is
// checked against the description (CheckResponse) before it is returned.
func (d *APIDescription) MinimalResponse(t testing.TB, operationID string, status int) []byte {
	t.Helper()
	route, ok := d.byID[operationID]
	if !ok {
		t.Fatalf("%s API: no operation %q in %s", d.name, operationID, d.file)
	}
	resp := route.Operation.Responses.Status(status)
	if resp == nil || resp.Value == nil {
		t.Fatalf("%s API operation %s: no response %d", d.name, operationID, status)
	}
	mt := resp.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil // no JSON body (204 and the like)
	}
	v, err := minimal(mt.Schema.Value, 0)
	if err != nil {
		t.Fatalf("%s API operation %s: minimal answer %d: %v", d.name, operationID, status, err)
	}
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	d.CheckResponse(t, operationID, status, body)
	return body
}

// minimal builds the least instance of s.
func minimal(s *openapi3.Schema, depth int) (any, error) {
	if depth > 40 {
		return nil, fmt.Errorf("schema nests deeper than 40 levels")
	}
	if len(s.AllOf) > 0 {
		return minimalAllOf(s, depth)
	}
	for _, alts := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		if len(alts) > 0 && alts[0].Value != nil {
			v, err := minimal(alts[0].Value, depth+1)
			if m, ok := v.(map[string]any); ok && err == nil && s.Discriminator != nil {
				// The discriminator names the alternative: its mapping key for the
				// first alternative's $ref.
				for key, ref := range s.Discriminator.Mapping {
					if ref.Ref == alts[0].Ref {
						m[s.Discriminator.PropertyName] = key
					}
				}
			}
			return v, err
		}
	}
	if len(s.Enum) > 0 {
		return s.Enum[0], nil
	}
	switch {
	case s.Type.Is("object") || (s.Type == nil && len(s.Properties) > 0):
		return minimalObject(s, depth)
	case s.Type.Is("array"):
		items := []any{}
		if s.MinItems > 0 && s.Items != nil && s.Items.Value != nil {
			for range s.MinItems {
				v, err := minimal(s.Items.Value, depth+1)
				if err != nil {
					return nil, err
				}
				items = append(items, v)
			}
		}
		return items, nil
	case s.Type.Is("string"):
		return minimalString(s), nil
	case s.Type.Is("integer"), s.Type.Is("number"):
		if s.Min != nil {
			return math.Ceil(*s.Min), nil
		}
		return 0, nil
	case s.Type.Is("boolean"):
		return false, nil
	}
	return nil, nil // no type: any value, null being the least
}

func minimalObject(s *openapi3.Schema, depth int) (map[string]any, error) {
	out := map[string]any{}
	for _, name := range s.Required {
		p := s.Properties[name]
		if p == nil || p.Value == nil {
			out[name] = nil
			continue
		}
		if p.Value.Nullable {
			out[name] = nil
			continue
		}
		v, err := minimal(p.Value, depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

// minimalAllOf merges the minimal objects of every part (GitHub's descriptions use
// allOf to extend a shared schema).
func minimalAllOf(s *openapi3.Schema, depth int) (any, error) {
	merged := map[string]any{}
	rest := *s
	rest.AllOf = nil
	parts := []*openapi3.Schema{&rest}
	for _, p := range s.AllOf {
		if p.Value != nil {
			parts = append(parts, p.Value)
		}
	}
	for _, p := range parts {
		v, err := minimal(p, depth+1)
		if err != nil {
			return nil, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			if p != &rest {
				return v, nil // an allOf of one non-object schema
			}
			continue
		}
		for k, x := range m {
			merged[k] = x
		}
	}
	return merged, nil
}

// minimalString is the least string its format and length allow.
func minimalString(s *openapi3.Schema) string {
	switch s.Format {
	case "date-time":
		return "2011-01-26T19:01:12Z"
	case "date":
		return "2011-01-26"
	case "uri", "url":
		return "https://example.com/"
	case "email":
		return "octocat@example.com"
	case "uuid":
		return "00000000-0000-0000-0000-000000000000"
	}
	if s.Pattern != "" {
		if v, ok := shortestMatch(s.Pattern); ok {
			return v
		}
	}
	return strings.Repeat("a", max(int(s.MinLength), 1))
}

// shortestMatch returns the shortest string of the pattern's first choices (the first
// alternative, the first rune of each class, the least repetition), when it matches.
func shortestMatch(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	var walk func(*syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
		case syntax.OpCharClass:
			if len(r.Rune) > 0 {
				b.WriteRune(r.Rune[0])
			}
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('a')
		case syntax.OpCapture, syntax.OpPlus:
			walk(r.Sub[0])
		case syntax.OpRepeat:
			for range r.Min {
				walk(r.Sub[0])
			}
		case syntax.OpConcat:
			for _, sub := range r.Sub {
				walk(sub)
			}
		case syntax.OpAlternate:
			walk(r.Sub[0])
		}
	}
	walk(re)
	v := b.String()
	ok, err := regexp.MatchString(pattern, v)
	return v, err == nil && ok && v != ""
}
