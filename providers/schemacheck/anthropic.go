package schemacheck

import (
	"encoding/json"
	"slices"
	"strings"
)

// Anthropic's tool input_schema is a JSON Schema whose root is an object
// (https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools); a
// tool used with strict: true
// (https://platform.claude.com/docs/en/agents-and-tools/tool-use/strict-tool-use)
// takes the subset its structured outputs document
// (https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations),
// which a schema meant for every client keeps to:
//
//   - supported: the basic types (object, array, string, integer, number, boolean,
//     null), enum of primitives, const, anyOf, allOf, local $ref with $defs or
//     definitions, required, additionalProperties: false, description, title,
//     string formats date-time, time, date, duration, email, hostname, uri, ipv4,
//     ipv6, uuid, minItems of 0 or 1, simple patterns;
//   - not supported: recursive schemas, numerical constraints (minimum, maximum,
//     multipleOf, exclusive bounds), string constraints (minLength, maxLength),
//     array constraints beyond minItems 0 or 1, additionalProperties other than
//     false, external references, complex types in enums, regular expressions with
//     backreferences or lookaround.
var anthropicKeys = []string{"type", "enum", "const", "anyOf", "allOf", "$ref", "$defs", "definitions", "properties",
	"required", "additionalProperties", "items", "description", "title", "format", "minItems", "pattern"}

var anthropicFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}

// Anthropic checks a tool's input_schema against Anthropic's rules for strict tool use.
func Anthropic(raw json.RawMessage) []Violation {
	out := check(raw, func(root map[string]any, n node, add func(node, string)) {
		s := n.s
		if n.root && (len(types(s)) != 1 || types(s)[0] != "object") {
			add(n, "input_schema must be type object")
		}
		for _, k := range unknownKeys(s, anthropicKeys) {
			add(n, "keyword "+k+" is not supported")
		}
		for _, t := range types(s) {
			if !slices.Contains(openAITypes, t) {
				add(n, "type "+t+" is not supported")
			}
		}
		if f, ok := s["format"].(string); ok && !slices.Contains(anthropicFormats, f) {
			add(n, "format "+f+" is not supported")
		}
		if ap, ok := s["additionalProperties"]; ok && ap != false {
			add(n, "additionalProperties must be false")
		}
		if slices.Contains(types(s), "object") && s["additionalProperties"] != false {
			add(n, "an object must set additionalProperties: false")
		}
		if m, ok := s["minItems"].(json.Number); ok && m.String() != "0" && m.String() != "1" {
			add(n, "minItems other than 0 or 1")
		}
		if e, ok := s["enum"].([]any); ok {
			for _, v := range e {
				switch v.(type) {
				case map[string]any, []any:
					add(n, "enum values must be primitives")
				}
			}
		}
		if p, ok := s["pattern"].(string); ok {
			for _, complex := range []string{"(?=", "(?!", "(?<=", "(?<!", `\1`, `\2`} {
				if strings.Contains(p, complex) {
					add(n, "pattern uses lookaround or backreferences")
					break
				}
			}
		}
		if ref, ok := s["$ref"].(string); ok && (!strings.HasPrefix(ref, "#") || pointer(root, ref) == nil) {
			add(n, "$ref "+ref+" is not a local reference")
		}
	})
	if root, err := decode(raw); err == nil && recursive(root) {
		out = append(out, Violation{Rule: "recursive schemas are not supported"})
	}
	return out
}
