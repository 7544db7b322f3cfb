package schemacheck

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// Gemini takes a function's parameters two ways
// (https://ai.google.dev/api/caching#FunctionDeclaration): parameters, a Schema in a
// select subset of OpenAPI 3.0, or parametersJsonSchema, a JSON Schema.
//
// parameters (https://ai.google.dev/api/caching#Schema) knows only the Schema
// fields type (one of STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT, NULL, in either
// case), format, title, description, nullable, enum (strings), maxItems, minItems,
// properties, required, minProperties, maxProperties, minLength, maxLength, pattern,
// example, anyOf, propertyOrdering, default, items, minimum and maximum: any other
// key (additionalProperties, $ref, oneOf, allOf, const, examples, a type list) is an
// unknown field the API refuses. The Gemini Developer API takes the formats date-time
// and enum for strings, float and double for numbers, int32 and int64 for integers
// (https://firebase.google.com/docs/reference/js/ai.schemashared). Parameter names
// start with a letter or an underscore and hold only letters, digits and
// underscores, at most 64
// (https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/FunctionDeclaration).
var geminiKeys = []string{"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
	"properties", "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example",
	"anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"}

var geminiTypes = []string{"string", "number", "integer", "boolean", "array", "object", "null"}

var geminiFormats = map[string][]string{"string": {"date-time", "enum"}, "number": {"float", "double"}, "integer": {"int32", "int64"}}

var geminiParamName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// GeminiParameters checks a schema as Gemini's FunctionDeclaration.parameters.
func GeminiParameters(raw json.RawMessage) []Violation {
	return check(raw, func(_ map[string]any, n node, add func(node, string)) {
		s := n.s
		for _, k := range unknownKeys(s, geminiKeys) {
			add(n, "field "+k+" is not in Gemini's Schema")
		}
		t, isString := s["type"].(string)
		if _, ok := s["type"]; ok && !isString {
			add(n, "type must be one type")
		}
		t = strings.ToLower(t)
		if isString && !slices.Contains(geminiTypes, t) {
			add(n, "type "+t+" is not supported")
		}
		if f, ok := s["format"].(string); ok && !slices.Contains(geminiFormats[t], f) {
			add(n, "format "+f+" is not supported for type "+t)
		}
		if e, ok := s["enum"].([]any); ok {
			for _, v := range e {
				if _, ok := v.(string); !ok {
					add(n, "enum values must be strings")
					break
				}
			}
		}
		if n.root {
			if props, ok := s["properties"].(map[string]any); ok {
				for name := range props {
					if !geminiParamName.MatchString(name) {
						add(n, "parameter name "+name+" must match "+geminiParamName.String())
					}
				}
			}
		}
	})
}

// Gemini's parametersJsonSchema takes the JSON Schema keywords its structured output
// documents (https://ai.google.dev/gemini-api/docs/structured-output#json-schema-support):
// $id, $defs, $ref, $anchor, type, format, title, description, enum, items,
// prefixItems, minItems, maxItems, minimum, maximum, anyOf, oneOf, properties,
// additionalProperties, required and propertyOrdering; others are not supported.
var geminiJSONKeys = []string{"$id", "$defs", "$ref", "$anchor", "type", "format", "title", "description", "enum",
	"items", "prefixItems", "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf", "properties",
	"additionalProperties", "required", "propertyOrdering"}

// GeminiJSONSchema checks a schema as Gemini's FunctionDeclaration.parametersJsonSchema.
func GeminiJSONSchema(raw json.RawMessage) []Violation {
	return check(raw, func(root map[string]any, n node, add func(node, string)) {
		s := n.s
		if n.root && (len(types(s)) != 1 || types(s)[0] != "object") {
			add(n, "the schema must describe an object")
		}
		for _, k := range unknownKeys(s, geminiJSONKeys) {
			add(n, "keyword "+k+" is not supported")
		}
		if e, ok := s["enum"].([]any); ok {
			for _, v := range e {
				switch v.(type) {
				case string, json.Number:
				default:
					add(n, "enum values must be strings or numbers")
				}
			}
		}
		if ref, ok := s["$ref"].(string); ok && pointer(root, ref) == nil {
			add(n, "$ref "+ref+" does not resolve in the schema")
		}
	})
}
