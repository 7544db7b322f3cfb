package providertest

import "encoding/json"

// prunedKeys are the members of a description that validation never reads; decoding the
// GitHub description into kin-openapi's types costs time in proportion to its size, so
// they are dropped first. Member names of maps whose keys are names (properties, paths,
// content types, …) are never dropped.
var prunedKeys = map[string]bool{
	"description": true, "summary": true, "example": true, "examples": true,
	"x-github": true, "externalDocs": true, "tags": true,
}

// nameMaps are the members whose values map names to objects.
var nameMaps = map[string]bool{
	"properties": true, "patternProperties": true, "schemas": true, "responses": true, "parameters": true,
	"headers": true, "paths": true, "requestBodies": true, "securitySchemes": true, "content": true,
	"encoding": true, "links": true, "callbacks": true, "variables": true, "definitions": true,
	"securityDefinitions": true, "mapping": true, "webhooks": true,
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
			if !namesOnly && prunedKeys[k] {
				if _, isString := c.(string); isString || k != "description" {
					delete(x, k)
					continue
				}
			}
			pruneValue(c, !namesOnly && nameMaps[k])
		}
	case []any:
		for _, c := range x {
			pruneValue(c, false)
		}
	}
}
