package providers

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// HeaderAnnotation is the input-schema keyword by which a tool asks MCP clients of
// protocol 2026-07-28 to mirror an argument into an HTTP header: a property annotated
// {"x-mcp-header": "Region"} travels in the body and in Mcp-Param-Region as well, so a
// gateway can route on it without reading the body, and the server refuses a call
// whose header and body disagree (SEP-2243). A provider declares it in its input
// schema; every listing keeps it where it is valid, since a client that is not told
// about the header cannot send it, and the MCP surface checks the headers of a call
// against exactly what the tool is listed with.
const HeaderAnnotation = "x-mcp-header"

// headerTypes are the types a mirrored argument may have: HTTP carries a string, an
// integer or a boolean faithfully, not a number with a fraction, an array or an object.
var headerTypes = []string{"string", "integer", "boolean"}

// keepValidHeaderAnnotations leaves in a listed schema only the x-mcp-header
// annotations SEP-2243 allows: on a property reached from the root through properties
// alone (not under items, anyOf or $defs), whose type is declared and only string,
// integer or boolean, naming an HTTP token that no other annotation names, whatever
// its case. Any other annotation goes (a client would have to exclude the whole tool
// for it, and the MCP surface could not register it): the tool is then listed, and
// called, without that header.
func keepValidHeaderAnnotations(root map[string]any) {
	type kept struct {
		s    map[string]any
		name string
	}
	var keep []kept
	named := map[string]int{} // annotations by name, whatever the case
	var visit func(s map[string]any)
	visit = func(s map[string]any) {
		props, _ := s["properties"].(map[string]any)
		for _, ps := range props {
			ps, ok := ps.(map[string]any)
			if !ok {
				continue
			}
			if name, ok := ps[HeaderAnnotation].(string); ok {
				named[strings.ToLower(name)]++
				if headerToken(name) && headerPrimitive(ps) {
					keep = append(keep, kept{ps, name})
				}
			}
			visit(ps)
		}
	}
	visit(root)
	dropAnnotations(root)
	for _, k := range keep {
		if named[strings.ToLower(k.name)] == 1 { // a name said twice says neither
			k.s[HeaderAnnotation] = k.name
		}
	}
}

// dropAnnotations takes every x-mcp-header out of a schema, wherever it is.
func dropAnnotations(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, HeaderAnnotation)
		for k, e := range x {
			if k == "enum" || k == "const" || k == "default" || k == "examples" {
				continue // values, not schemas
			}
			dropAnnotations(e)
		}
	case []any:
		for _, e := range x {
			dropAnnotations(e)
		}
	}
}

// headerPrimitive reports whether a schema declares its type, and only types a header
// carries.
func headerPrimitive(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		return slices.Contains(headerTypes, t)
	case []any:
		if len(t) == 0 {
			return false
		}
		for _, e := range t {
			if n, ok := e.(string); !ok || !slices.Contains(headerTypes, n) {
				return false
			}
		}
		return true
	}
	return false
}

// headerToken reports whether a name is an HTTP field-name token (RFC 9110 tchar+).
func headerToken(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		switch {
		case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", c):
		default:
			return false
		}
	}
	return true
}

// WithoutHeaderAnnotations returns a listed input schema less its x-mcp-header
// annotations: the schema as a client that mirrors them into headers hands it on to a
// model, whose function-calling API knows no keyword of MCP's. A schema that is not a
// JSON object is returned as it is.
func WithoutHeaderAnnotations(schema json.RawMessage) json.RawMessage {
	if !bytes.Contains(schema, []byte(HeaderAnnotation)) {
		return schema
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var s map[string]any
	if dec.Decode(&s) != nil {
		return schema
	}
	dropAnnotations(s)
	out, err := json.Marshal(s)
	if err != nil {
		return schema
	}
	return out
}
