package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// ListedInput returns an input schema as an MCP tools/list serves it: the full schema
// less what neither a model nor a validator reads. An example whose value the
// description already quotes ("e.g. octocat" beside examples: ["octocat"]) is dropped;
// types, required fields, enums, defaults, bounds, patterns, formats, descriptions
// and the examples the description does not repeat are all kept, since they are what
// lets an agent call the tool right the first time.
func ListedInput(full json.RawMessage) (json.RawMessage, error) {
	return listed(full, leanInput)
}

// ListedOutput returns an output schema as an MCP tools/list serves it: the result's
// top level, which is what a client reads to know what comes back and all a validator
// needs. The root keeps its properties, their types and scalar constraints (enums,
// patterns, formats, bounds) and its required fields; a property whose value is an
// object is listed as {"type":"object"}, and an array of objects as an array whose
// items are {"type":"object"}, without their fields. Descriptions, titles, examples
// and defaults are prose for people, and additionalProperties: false only makes a
// validator refuse a field the upstream adds one day, so they go at every level.
//
// The listed schema is looser than the full one, never stricter: whatever validates
// against the full schema validates against it, so every structuredContent the hub
// sends does. Models are not shown output schemas; the REST catalog serves the full
// ones, nested fields and their descriptions included.
func ListedOutput(full json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(full))
	dec.UseNumber()
	var s map[string]any
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("listed schema: %w", err)
	}
	walkSchemas(s, leanOutput)
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			if ps, ok := p.(map[string]any); ok {
				props[name] = topLevel(ps)
			}
		}
	}
	return json.Marshal(s)
}

// topLevel is a root property's schema in a listed output schema: an object without
// its fields, an array with its items so cut, a scalar as it is.
func topLevel(s map[string]any) map[string]any {
	switch {
	case isObject(s):
		return map[string]any{"type": "object"}
	case s["type"] == "array":
		items, ok := s["items"].(map[string]any)
		if !ok {
			return s
		}
		out := map[string]any{}
		for k, v := range s {
			out[k] = v
		}
		out["items"] = topLevel(items)
		return out
	}
	return s
}

// isObject reports whether a schema describes a JSON object (a record or a map).
func isObject(s map[string]any) bool {
	if s["type"] == "object" {
		return true
	}
	_, props := s["properties"]
	return props
}

func listed(full json.RawMessage, lean func(map[string]any)) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(full))
	dec.UseNumber()
	var s map[string]any
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("listed schema: %w", err)
	}
	walkSchemas(s, lean)
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

func leanInput(s map[string]any) {
	delete(s, "title")
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

func leanOutput(s map[string]any) {
	for _, k := range []string{"description", "title", "examples", "default"} {
		delete(s, k)
	}
	if ap, ok := s["additionalProperties"].(bool); ok && !ap {
		delete(s, "additionalProperties")
	}
}
