package openapi

import (
	"maps"
	"regexp"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxSchemaDepth and maxSchemaNodes bound how much of a description's schema is
// copied into a tool's (references are inlined, and a large API's objects refer to each
// other many times over: Stripe's would grow without end): past them, and at a schema
// that contains itself, any value is accepted.
const (
	maxSchemaDepth = 6
	maxSchemaNodes = 300
)

// schemaMode says which side of the API a schema describes: an input drops the
// properties the server sets (readOnly), an output those it never sends (writeOnly)
// and does not insist on what the description requires (answers stray from it).
type schemaMode int

const (
	forInput schemaMode = iota
	forOutput
)

// jsonSchema converts a description's schema (OpenAPI 3.0's dialect, or 3.1's) into a
// self-contained JSON Schema 2020-12 value: references inlined, nullable turned into a
// "null" type, 3.0's boolean exclusive bounds into numbers, patterns Go cannot compile
// dropped, and annotations JSON Schema does not know left out.
func jsonSchema(ref *openapi3.SchemaRef, mode schemaMode) map[string]any {
	budget := maxSchemaNodes
	return convert(ref, mode, 0, map[*openapi3.Schema]bool{}, &budget)
}

func convert(ref *openapi3.SchemaRef, mode schemaMode, depth int, path map[*openapi3.Schema]bool, budget *int) map[string]any {
	if ref == nil || ref.Value == nil {
		return map[string]any{}
	}
	s := ref.Value
	*budget--
	if depth >= maxSchemaDepth || path[s] || *budget < 0 {
		out := map[string]any{}
		if s.Description != "" {
			out["description"] = s.Description
		}
		return out
	}
	path[s] = true
	defer delete(path, s)
	out := map[string]any{}
	sub := func(r *openapi3.SchemaRef) map[string]any { return convert(r, mode, depth+1, path, budget) }
	subs := func(rs openapi3.SchemaRefs) []any {
		l := make([]any, 0, len(rs))
		for _, r := range rs {
			l = append(l, sub(r))
		}
		return l
	}
	if s.Type != nil && len(*s.Type) > 0 {
		types := append([]string(nil), (*s.Type)...)
		if s.Nullable && !s.Type.Includes("null") {
			types = append(types, "null")
		}
		if len(types) == 1 {
			out["type"] = types[0]
		} else {
			out["type"] = types
		}
	}
	if s.Title != "" {
		out["title"] = s.Title
	}
	if s.Description != "" {
		out["description"] = s.Description
	}
	if s.Format != "" {
		out["format"] = s.Format
	}
	if len(s.Enum) > 0 {
		enum := s.Enum
		if s.Nullable && !contains(enum, nil) {
			enum = append(append([]any(nil), enum...), nil)
		}
		out["enum"] = enum
	}
	if s.Const != nil {
		out["const"] = s.Const
	}
	if s.Default != nil {
		out["default"] = s.Default
	}
	if s.Deprecated {
		out["deprecated"] = true
	}
	bounds(s, out)
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err == nil {
			out["pattern"] = s.Pattern
		}
	}
	if s.MinLength > 0 {
		out["minLength"] = s.MinLength
	}
	if s.MaxLength != nil {
		out["maxLength"] = *s.MaxLength
	}
	if s.Items != nil {
		out["items"] = sub(s.Items)
	}
	if s.MinItems > 0 {
		out["minItems"] = s.MinItems
	}
	if s.MaxItems != nil {
		out["maxItems"] = *s.MaxItems
	}
	if s.UniqueItems && mode == forInput {
		out["uniqueItems"] = true
	}
	if len(s.Properties) > 0 {
		props := map[string]any{}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) { // in order: the budget runs out at the same place every time
			p := s.Properties[name]
			if p != nil && p.Value != nil && (mode == forInput && p.Value.ReadOnly || mode == forOutput && p.Value.WriteOnly) {
				continue
			}
			props[name] = sub(p)
		}
		out["properties"] = props
		if mode == forInput {
			var req []any
			for _, r := range s.Required {
				if _, ok := props[r]; ok {
					req = append(req, r)
				}
			}
			if len(req) > 0 {
				out["required"] = req
			}
		}
	}
	if ap := s.AdditionalProperties; ap.Schema != nil {
		out["additionalProperties"] = sub(ap.Schema)
	} else if ap.Has != nil && !*ap.Has && mode == forInput {
		out["additionalProperties"] = false
	}
	if len(s.AllOf) > 0 {
		out["allOf"] = subs(s.AllOf)
	}
	if len(s.AnyOf) > 0 {
		out["anyOf"] = subs(s.AnyOf)
	}
	if len(s.OneOf) > 0 {
		if mode == forOutput {
			out["anyOf"] = subs(s.OneOf) // an answer matching two branches is still an answer
		} else {
			out["oneOf"] = subs(s.OneOf)
		}
	}
	if s.Not != nil && mode == forInput {
		out["not"] = sub(s.Not)
	}
	return out
}

// bounds copies a schema's numeric bounds: OpenAPI 3.0 marks minimum and maximum
// exclusive with a boolean, 3.1 (as JSON Schema) gives the exclusive bound itself.
func bounds(s *openapi3.Schema, out map[string]any) {
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		out["multipleOf"] = *s.MultipleOf
	}
	setBound := func(plain, exclusive string, v *float64, eb openapi3.ExclusiveBound) {
		switch {
		case eb.Value != nil:
			out[exclusive] = *eb.Value
			if v != nil {
				out[plain] = *v
			}
		case eb.Bool != nil && *eb.Bool && v != nil:
			out[exclusive] = *v
		case v != nil:
			out[plain] = *v
		}
	}
	setBound("minimum", "exclusiveMinimum", s.Min, s.ExclusiveMin)
	setBound("maximum", "exclusiveMaximum", s.Max, s.ExclusiveMax)
}

func contains(l []any, v any) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}
