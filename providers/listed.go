package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ListedInput returns an input schema as an MCP tools/list serves it: the full schema
// less what neither a model nor a client validating a call reads, said once. Types,
// required fields, enums, defaults, bounds, patterns, formats and descriptions are
// kept, since they are what lets an agent call the tool right the first time; what goes:
//
//   - titles, and vendor extensions (x-…), which no model or validator reads, but for
//     a valid x-mcp-header (HeaderAnnotation), which tells a client what to send;
//   - an example whose value the description already quotes ("e.g. octocat" beside
//     examples: ["octocat"]), and a page cursor's example (the model passes back the
//     next_cursor it was given and never writes one, so the opaque sample teaches
//     it nothing);
//   - a maxLength of LongText characters or more: no argument a model writes comes
//     near it (Stripe puts 5,000 on every string), and the server still refuses a
//     longer one, naming the field;
//   - the type beside a one-value enum, which its value says (Stripe's
//     {"type":"string","enum":[""]} that unsets a field);
//   - an optional property whose schema admits only the empty object (the empty
//     request body Stripe describes on every GET): there is nothing to send in it;
//   - a subschema repeated whole within the tool, of sharedMin bytes or more, is said
//     once under $defs and referred to where it was (the 295 merchant categories
//     Stripe lists three times in a card's spending controls).
//
// The listed schema is never stricter than the full one: every argument the full
// schema accepts, it accepts. The server validates with the full schema.
func ListedInput(full json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(full))
	dec.UseNumber()
	var s map[string]any
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("listed schema: %w", err)
	}
	walkSchemas(s, leanInput)
	if !refers(full) {
		shareRepeats(s)
	}
	keepValidHeaderAnnotations(s)
	return json.Marshal(s)
}

// ListedOutput returns an output schema as an MCP tools/list serves it: the result's
// type and the fields it always carries (the root's type and required). That is what a
// client validating structuredContent needs, and models are not shown output schemas
// (clients hand them a tool's name, description and input schema). What the fields
// hold, their types, nested records and descriptions, is in the full schema the REST
// catalog serves; in every tools/list it cost most of the bytes (GitHub's 51 tools:
// 60 KB of output schemas in full, 27 KB without their prose, 16 KB at the top level
// with types, 4 KB so).
//
// The listed schema is looser than the full one, never stricter: whatever validates
// against the full schema validates against it, so every structuredContent the hub
// sends does.
func ListedOutput(full json.RawMessage) (json.RawMessage, error) {
	var s struct {
		Type     any   `json:"type"`
		Required []any `json:"required,omitempty"`
	}
	if err := json.Unmarshal(full, &s); err != nil {
		return nil, fmt.Errorf("listed schema: %w", err)
	}
	if s.Type == nil {
		return nil, fmt.Errorf("listed schema: no type at the root")
	}
	return json.Marshal(s)
}

// walkSchemas calls fn on s and on every schema nested in it (properties, items,
// additionalProperties and the combinators), children first.
func walkSchemas(s map[string]any, fn func(map[string]any)) {
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			if ps, ok := p.(map[string]any); ok {
				walkSchemas(ps, fn)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if sub, ok := s[k].(map[string]any); ok {
			walkSchemas(sub, fn)
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if list, ok := s[k].([]any); ok {
			for _, item := range list {
				if sub, ok := item.(map[string]any); ok {
					walkSchemas(sub, fn)
				}
			}
		}
	}
	fn(s)
}

// LongText is the length from which a string's maxLength is left out of a listed
// input: a document's length, which no argument a model writes comes near.
const LongText = 4096

// leanInput cuts one schema of an input (ListedInput says what and why); walkSchemas
// has already cut the schemas nested in it.
func leanInput(s map[string]any) {
	for k := range s {
		if k == "title" || strings.HasPrefix(k, "x-") && k != HeaderAnnotation {
			delete(s, k)
		}
	}
	if n, ok := s["maxLength"].(json.Number); ok {
		if v, err := n.Int64(); err == nil && v >= LongText {
			delete(s, "maxLength")
		}
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) == 1 {
		if t, ok := s["type"].(string); ok && t == jsonType(enum[0]) {
			delete(s, "type")
		}
	}
	if props, ok := s["properties"].(map[string]any); ok && !closed(s) {
		required, _ := s["required"].([]any)
		for name, p := range props {
			if ps, ok := p.(map[string]any); ok && onlyEmptyObject(ps) && !slices.Contains(required, any(name)) {
				delete(props, name)
			}
		}
	}
	props, _ := s["properties"].(map[string]any)
	if c, ok := props["cursor"].(map[string]any); ok {
		if desc, _ := c["description"].(string); strings.Contains(desc, "next_cursor") {
			delete(c, "examples")
		}
	}
	examples, ok := s["examples"].([]any)
	if !ok {
		return
	}
	desc, _ := s["description"].(string)
	kept := examples[:0:0]
	for _, ex := range examples {
		if !quoted(desc, ex) {
			kept = append(kept, ex)
		}
	}
	if len(kept) == 0 {
		delete(s, "examples")
		return
	}
	s["examples"] = kept
}

// jsonType is the JSON Schema type of a decoded scalar that implies it alone, or "".
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return ""
}

// closed reports whether an object schema refuses properties it does not name, so
// leaving one of them out of the listing would refuse what the full schema accepts.
func closed(s map[string]any) bool {
	for _, k := range []string{"additionalProperties", "unevaluatedProperties", "patternProperties"} {
		if _, ok := s[k]; ok {
			return true
		}
	}
	return false
}

// onlyEmptyObject reports whether a schema admits the empty object and nothing else:
// an object with no properties and no others allowed.
func onlyEmptyObject(s map[string]any) bool {
	if s["type"] != "object" || s["additionalProperties"] != false {
		return false
	}
	for k, v := range s {
		switch k {
		case "type", "additionalProperties", "description", "title":
		case "properties":
			if props, ok := v.(map[string]any); !ok || len(props) > 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// quoted reports whether the description already shows the example: a scalar's text,
// or every item of an array example.
func quoted(desc string, ex any) bool {
	switch v := ex.(type) {
	case string:
		return v != "" && strings.Contains(desc, v)
	case json.Number:
		return strings.Contains(desc, v.String())
	case []any:
		if len(v) == 0 {
			return false
		}
		for _, item := range v {
			if !quoted(desc, item) {
				return false
			}
		}
		return true
	}
	return false
}
