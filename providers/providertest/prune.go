package providertest

import "encoding/json"

// pruned reports whether a member is one that validation never reads; decoding the
// GitHub description into kin-openapi's types costs time in proportion to its size, so
// these are dropped first. Member names of maps whose keys are names (properties,
// paths, content types, …) are never dropped.
func pruned(key string) bool {
	switch key {
	case "description", "summary", "example", "examples", "x-github", "externalDocs", "tags":
		return true
	}
	return false
}

// nameMap reports whether a member's value maps names to objects.
func nameMap(key string) bool {
	switch key {
	case "properties", "patternProperties", "schemas", "responses", "parameters", "headers", "paths",
		"requestBodies", "securitySchemes", "content", "encoding", "links", "callbacks", "variables",
		"definitions", "securityDefinitions", "mapping", "webhooks":
		return true
	}
	return false
}

// prune decodes a JSON description, drops what validation never reads and encodes it again.
func prune(data []byte) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	pruneValue(doc, false)
	return json.Marshal(doc)
}

func pruneValue(v any, namesOnly bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if !namesOnly && pruned(k) {
				if _, isString := c.(string); isString || k != "description" {
					delete(x, k)
					continue
				}
			}
			pruneValue(c, !namesOnly && nameMap(k))
		}
	case []any:
		for _, c := range x {
			pruneValue(c, false)
		}
	}
}
