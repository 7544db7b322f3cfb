package describedfake

import (
	"regexp/syntax"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Generate is a value of a schema: each required property (but those read-only in a
// request, or write-only in an answer), one item of an array, the first alternative of
// oneOf and anyOf, the shortest string a pattern admits.
func Generate(ref *openapi3.SchemaRef, request bool) any {
	return generate(ref, 0, request)
}

func generate(ref *openapi3.SchemaRef, depth int, request bool) any {
	if ref == nil || ref.Value == nil || depth > 20 {
		return map[string]any{}
	}
	s := ref.Value
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if len(s.OneOf) > 0 {
		return generate(s.OneOf[0], depth+1, request)
	}
	if len(s.AnyOf) > 0 {
		return generate(s.AnyOf[0], depth+1, request)
	}
	if len(s.AllOf) > 0 || s.Type == nil && len(s.Properties) > 0 || s.Type != nil && s.Type.Includes("object") {
		if s.Type == nil && len(s.Properties) == 0 && len(s.Required) == 0 {
			for _, a := range s.AllOf { // a typed value refined by allOf (Box's sequence_id)
				if a != nil && a.Value != nil && a.Value.Type != nil && !a.Value.Type.Includes("object") {
					return generate(a, depth+1, request)
				}
			}
		}
		props, required := map[string]*openapi3.SchemaRef{}, []string{}
		var gather func(*openapi3.Schema, int)
		gather = func(s *openapi3.Schema, d int) {
			if s == nil || d > 20 {
				return
			}
			for k, v := range s.Properties {
				if _, ok := props[k]; !ok {
					props[k] = v
				}
			}
			required = append(required, s.Required...)
			for _, a := range s.AllOf {
				if a != nil {
					gather(a.Value, d+1)
				}
			}
		}
		gather(s, 0)
		if len(props) > 0 || len(required) > 0 || s.Type == nil || s.Type.Includes("object") {
			out := map[string]any{}
			for _, name := range required {
				p := props[name]
				if p != nil && p.Value != nil && (request && p.Value.ReadOnly || !request && p.Value.WriteOnly) {
					continue
				}
				out[name] = generate(p, depth+1, request)
			}
			return out
		}
	}
	switch {
	case s.Type == nil && s.Items != nil, s.Type != nil && s.Type.Includes("array"):
		out := []any{}
		for i := uint64(0); i < max(1, s.MinItems); i++ {
			out = append(out, generate(s.Items, depth+1, request))
		}
		return out
	case s.Type == nil:
		return map[string]any{}
	case s.Type.Includes("string"):
		if v, ok := FormatSample(s.Format); ok {
			return v
		}
		if g, ok := FromPattern(s.Pattern); ok && s.Pattern != "" {
			return g
		}
		return strings.Repeat("x", max(1, int(s.MinLength)))
	case s.Type.Includes("integer"), s.Type.Includes("number"):
		v := 1.0
		if s.Min != nil {
			v = *s.Min + map[bool]float64{true: 1}[s.ExclusiveMin.IsTrue()]
		}
		if s.Max != nil && v > *s.Max {
			v = *s.Max
		}
		if s.MultipleOf != nil && *s.MultipleOf > 0 {
			v = *s.MultipleOf
		}
		return v
	case s.Type.Includes("boolean"):
		return true
	}
	return nil
}

// FormatSample is a string of a JSON Schema format (date, date-time, uuid, email, uri,
// byte); ok is false for any other.
func FormatSample(format string) (string, bool) {
	switch format {
	case "date":
		return "2026-01-02", true
	case "date-time":
		return "2026-01-02T03:04:05Z", true
	case "uuid":
		return "00000000-0000-4000-8000-000000000000", true
	case "email":
		return "ada@example.com", true
	case "uri", "url":
		return "https://example.com/x", true
	case "byte":
		return "eA==", true
	}
	return "", false
}

// FromPattern is the shortest string a regular expression matches.
func FromPattern(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	var walk func(*syntax.Regexp) bool
	walk = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
		case syntax.OpCharClass:
			if len(r.Rune) == 0 {
				return false
			}
			b.WriteRune(r.Rune[0])
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('x')
		case syntax.OpCapture:
			return walk(r.Sub[0])
		case syntax.OpConcat:
			for _, sub := range r.Sub {
				if !walk(sub) {
					return false
				}
			}
		case syntax.OpAlternate:
			return walk(r.Sub[0])
		case syntax.OpPlus:
			return walk(r.Sub[0])
		case syntax.OpRepeat:
			for range r.Min {
				if !walk(r.Sub[0]) {
					return false
				}
			}
		case syntax.OpStar, syntax.OpQuest, syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		default:
			return false
		}
		return true
	}
	if !walk(re) {
		return "", false
	}
	return b.String(), true
}
