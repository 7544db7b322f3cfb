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
//
// A page cursor's example goes too: the model passes back the next_cursor it was
// given and never writes one, so the opaque sample teaches it nothing.
func ListedInput(full json.RawMessage) (json.RawMessage, error) {
	return listed(full, func(s map[string]any) {
		leanInput(s)
		if props, ok := s["properties"].(map[string]any); ok {
			if c, ok := props["cursor"].(map[string]any); ok {
				if desc, _ := c["description"].(string); strings.Contains(desc, "next_cursor") {
					delete(c, "examples")
				}
			}
		}
	})
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
