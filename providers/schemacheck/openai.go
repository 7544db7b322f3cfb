package schemacheck

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// OpenAI's strict mode for function calling (strict: true) takes the schema subset
// of Structured Outputs:
// https://platform.openai.com/docs/guides/structured-outputs#supported-schemas and
// https://platform.openai.com/docs/guides/function-calling#strict-mode.
//
//   - the root is an object, not anyOf;
//   - every object sets additionalProperties: false and lists every property in
//     required (an optional field is a required one whose type admits null);
//   - supported keywords: type (string, number, boolean, integer, object, array,
//     null, or a list of them), enum, const, anyOf, $ref with $defs/definitions,
//     properties, required, additionalProperties, items, description, title; for
//     strings pattern and format (date-time, time, date, duration, email, hostname,
//     ipv4, ipv6, uuid); for numbers multipleOf, minimum, maximum, exclusiveMinimum,
//     exclusiveMaximum; for arrays minItems and maxItems. Anything else (allOf, oneOf,
//     not, minLength, maxLength, default, examples, patternProperties, …) is refused;
//   - limits: at most 5,000 object properties and 10 levels of object nesting; at
//     most 1,000 enum values; an enum of more than 250 values at most 15,000
//     characters; property names, definition names, enum and const values at most
//     120,000 characters in all.
var openAIKeys = []string{"type", "enum", "const", "anyOf", "$ref", "$defs", "definitions", "properties", "required",
	"additionalProperties", "items", "description", "title", "pattern", "format", "multipleOf", "minimum", "maximum",
	"exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems"}

var openAIFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}

var openAITypes = []string{"string", "number", "boolean", "integer", "object", "array", "null"}

// OpenAIStrict checks a function's parameters against OpenAI's strict mode.
func OpenAIStrict(raw json.RawMessage) []Violation {
	props, enums, text := 0, 0, 0
	out := check(raw, func(root map[string]any, n node, add func(node, string)) {
		s := n.s
		if n.root {
			if !slices.Contains(types(s), "object") || len(types(s)) != 1 {
				add(n, "the root must be type object")
			}
			if _, ok := s["anyOf"]; ok {
				add(n, "the root must not be anyOf")
			}
		}
		for _, k := range unknownKeys(s, openAIKeys) {
			add(n, "keyword "+k+" is not supported")
		}
		for _, t := range types(s) {
			if !slices.Contains(openAITypes, t) {
				add(n, "type "+t+" is not supported")
			}
		}
		if f, ok := s["format"].(string); ok && !slices.Contains(openAIFormats, f) {
			add(n, "format "+f+" is not supported")
		}
		if slices.Contains(types(s), "object") || s["properties"] != nil {
			if s["additionalProperties"] != false {
				add(n, "an object must set additionalProperties: false")
			}
			requiresAll(n, add)
		}
		if n.depth > 10 {
			add(n, "more than 10 levels of object nesting")
		}
		if p, ok := s["properties"].(map[string]any); ok {
			props += len(p)
			for k := range p {
				text += len(k)
			}
		}
		if e, ok := s["enum"].([]any); ok {
			enums += len(e)
			chars := 0
			for _, v := range e {
				chars += len(fmt.Sprint(v))
			}
			text += chars
			if len(e) > 250 && chars > 15000 {
				add(n, fmt.Sprintf("an enum of %d values holds %d characters, more than 15,000", len(e), chars))
			}
		}
		if c, ok := s["const"]; ok {
			text += len(fmt.Sprint(c))
		}
		for _, k := range []string{"$defs", "definitions"} {
			if d, ok := s[k].(map[string]any); ok {
				for name := range d {
					text += len(name)
				}
			}
		}
		if ref, ok := s["$ref"].(string); ok && (!strings.HasPrefix(ref, "#") || pointer(root, ref) == nil) {
			add(n, "$ref "+ref+" does not resolve in the schema")
		}
	})
	root := node{}
	if props > 5000 {
		out = append(out, Violation{Path: root.path, Rule: fmt.Sprintf("%d object properties, more than 5,000", props)})
	}
	if enums > 1000 {
		out = append(out, Violation{Path: root.path, Rule: fmt.Sprintf("%d enum values, more than 1,000", enums)})
	}
	if text > 120000 {
		out = append(out, Violation{Path: root.path, Rule: fmt.Sprintf("names and enum values hold %d characters, more than 120,000", text)})
	}
	return out
}
