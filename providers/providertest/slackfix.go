package providertest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Slack's description uses JSON Schema that OpenAPI 2 does not allow: `items` as a list
// of alternatives ("one of these", possibly {"type": "null"}) and `type` as a list
// ("type": ["null", "string"]). The description is rewritten in two passes around the
// OpenAPI 2 to 3 conversion: before it, alternatives are parked in an extension
// (x-providertest-anyof) and null is dropped from type lists in favour of
// x-providertest-nullable; after it, they become OpenAPI 3.0 anyOf and nullable.
const (
	extAnyOf    = "x-providertest-anyof"
	extNullable = "x-providertest-nullable"
)

// fixSlackV2 rewrites the raw OpenAPI 2 document so that it parses.
func fixSlackV2(raw []byte) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	walkObjects(doc, func(o map[string]any) {
		if alts, ok := o["items"].([]any); ok {
			delete(o, "items")
			if o["type"] == "array" {
				o["items"] = map[string]any{extAnyOf: alts}
			} else {
				o[extAnyOf] = alts
			}
		}
		if types, ok := o["type"].([]any); ok {
			kept := slices.DeleteFunc(slices.Clone(types), func(t any) bool { return t == "null" })
			if len(kept) < len(types) {
				o[extNullable] = true
			}
			switch len(kept) {
			case 0:
				delete(o, "type")
			case 1:
				o["type"] = kept[0]
			default:
				// OpenAPI 3.0 has no type lists: accept any of them.
				delete(o, "type")
				var anyOf []any
				for _, t := range kept {
					alt := map[string]any{"type": t}
					if t == "array" && o["items"] != nil {
						alt["items"] = o["items"]
					}
					anyOf = append(anyOf, alt)
				}
				delete(o, "items")
				o[extAnyOf] = anyOf
			}
		}
	})
	return json.Marshal(doc)
}

// fixSlackV3 turns the parked extensions of the converted document into OpenAPI 3.0.
func fixSlackV3(raw []byte) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	walkObjects(doc, func(o map[string]any) {
		if alts, ok := o[extAnyOf].([]any); ok {
			delete(o, extAnyOf)
			var anyOf []any
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && m["type"] == "null" {
					o["nullable"] = true
					continue
				}
				anyOf = append(anyOf, a)
			}
			if len(anyOf) > 0 {
				o["anyOf"] = anyOf
			}
		}
		if o[extNullable] == true {
			delete(o, extNullable)
			o["nullable"] = true
		}
		// References inside extensions were not converted.
		if ref, ok := o["$ref"].(string); ok && strings.HasPrefix(ref, "#/definitions/") {
			o["$ref"] = "#/components/schemas/" + strings.TrimPrefix(ref, "#/definitions/")
		}
	})
	return json.Marshal(doc)
}

// walkObjects calls f on every JSON object in v, parents before children.
func walkObjects(v any, f func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		f(x)
		for _, c := range x {
			walkObjects(c, f)
		}
	case []any:
		for _, c := range x {
			walkObjects(c, f)
		}
	}
}
