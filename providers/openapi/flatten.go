package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// hoistDepth is how deeply schemas may nest inside one another before flatten moves the
// deeper ones into the description's named schemas. The parser reads each schema's text
// again for every schema it is nested in, so its cost grows with the square of the
// nesting; a schema that is a reference costs nothing more to read.
const hoistDepth = 8

// flattenFrom is the nesting depth of a description past which flatten is worth its
// cost (a fifth of the parse of GitHub's description, which nests 21 deep): up to it,
// schemas nest too little for the parser's reading them again to cost more.
const flattenFrom = 32

// hoistPrefix starts the names flatten gives the schemas it moves.
const hoistPrefix = "nested_"

// flatten returns a JSON description whose schemas nest at most hoistDepth deep: each
// one deeper is moved into the named schemas (components/schemas, or Swagger 2.0's
// definitions) and referred to from where it was, which describes the same values.
// Callbacks, which no tool uses and which nest operations in operations, are left out.
// A description that needs no change comes back as it was.
func flatten(ctx context.Context, data []byte, swagger bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return data, nil // the parser says what is wrong with it
	}
	f := &flattener{ctx: ctx, moved: map[string]any{}, pointed: map[string]bool{}, ref: "#/components/schemas/"}
	named, ok := namedSchemas(root, swagger)
	if !ok {
		return data, nil
	}
	if swagger {
		f.ref = "#/definitions/"
	}
	f.taken = named
	pointedAt(root, f.pointed)
	f.document(root)
	if f.err != nil {
		return nil, f.err
	}
	if !f.changed {
		return data, nil
	}
	if named == nil {
		named = map[string]any{}
		if swagger {
			root["definitions"] = named
		} else {
			root["components"].(map[string]any)["schemas"] = named
		}
	}
	for name, s := range f.moved {
		named[name] = s
	}
	out, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("encode the flattened description: %w", err)
	}
	return out, nil
}

// namedSchemas is the description's map of named schemas (nil when it has none, and
// making the components object that will hold it), and false when the description's
// shape leaves no place for them (the parser then says what is wrong).
func namedSchemas(root map[string]any, swagger bool) (map[string]any, bool) {
	if swagger {
		named, ok := root["definitions"].(map[string]any)
		return named, ok || root["definitions"] == nil
	}
	if root["components"] == nil {
		root["components"] = map[string]any{}
	}
	comp, ok := root["components"].(map[string]any)
	if !ok {
		return nil, false
	}
	named, ok := comp["schemas"].(map[string]any)
	return named, ok || comp["schemas"] == nil
}

// flattener walks a description, moving the schemas nested too deeply.
type flattener struct {
	ctx   context.Context
	ref   string         // where named schemas are referred to
	taken map[string]any // the description's own named schemas
	moved map[string]any // the schemas moved, by their new name
	// pointed holds the places references point at or into (see pointedAt); path is
	// the walk's place, as JSON pointer tokens.
	pointed map[string]bool
	path    []string
	nodes   int
	changed bool // a schema moved, or callbacks were left out
	err     error
}

// literal reports whether a key's value is data, not description: examples, defaults,
// enumerations and extensions, which are never walked.
func literal(key string) bool {
	switch key {
	case "example", "examples", "default", "enum", "const":
		return true
	}
	return strings.HasPrefix(key, "x-")
}

// stop reports whether the walk must end: its context ended (kept in err).
func (f *flattener) stop() bool {
	if f.err != nil {
		return true
	}
	if f.nodes++; f.nodes%4096 == 0 {
		f.err = f.ctx.Err()
	}
	return f.err != nil
}

// document walks what is not a schema, looking for the schemas in it: the values of
// "schema" (parameters, media types, headers, Swagger 2.0 bodies and answers) and the
// named schemas.
func (f *flattener) document(v any) {
	if f.stop() {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			f.push(k)
			switch {
			case literal(k):
			case k == "callbacks":
				delete(x, k)
				f.changed = true
			case k == "schema":
				x[k] = f.schema(e, 0)
			case k == "schemas" || k == "definitions":
				f.members(e, 0)
			default:
				f.document(e)
			}
			f.pop()
		}
	case []any:
		for i, e := range x {
			f.push(strconv.Itoa(i))
			f.document(e)
			f.pop()
		}
	}
}

// schema walks a schema nested depth deep, returning what takes its place: itself, or a
// reference to it once moved. A schema that a reference points at, or into, stays where
// the reference expects it.
func (f *flattener) schema(v any, depth int) any {
	if f.stop() {
		return v
	}
	s, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if _, isRef := s["$ref"]; depth >= hoistDepth && !isRef && !f.pointed[f.pointer()] {
		name := f.name()
		f.moved[name] = s
		f.changed = true
		f.schema(s, 0)
		return map[string]any{"$ref": f.ref + name}
	}
	for k, e := range s {
		f.push(k)
		switch k {
		case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
			f.members(e, depth+1)
		case "items", "additionalProperties", "additionalItems", "not", "if", "then", "else", "contains",
			"propertyNames", "unevaluatedProperties", "unevaluatedItems", "contentSchema":
			if l, ok := e.([]any); ok {
				f.schemas(l, depth+1)
			} else {
				s[k] = f.schema(e, depth+1)
			}
		case "allOf", "anyOf", "oneOf", "prefixItems":
			if l, ok := e.([]any); ok {
				f.schemas(l, depth+1)
			}
		}
		f.pop()
	}
	return s
}

// members walks an object of named schemas in place.
func (f *flattener) members(v any, depth int) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for name, s := range m {
		f.push(name)
		m[name] = f.schema(s, depth)
		f.pop()
	}
}

// schemas walks a list of schemas in place.
func (f *flattener) schemas(l []any, depth int) {
	for i, e := range l {
		f.push(strconv.Itoa(i))
		l[i] = f.schema(e, depth)
		f.pop()
	}
}

// push and pop follow the walk's place in the description, as JSON pointer tokens.
func (f *flattener) push(key string) { f.path = append(f.path, pointerEscaper.Replace(key)) }
func (f *flattener) pop()            { f.path = f.path[:len(f.path)-1] }

// pointer is the walk's place as a reference names it: "#/paths/~1x/…".
func (f *flattener) pointer() string { return "#/" + strings.Join(f.path, "/") }

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointedAt is every place a local reference of the description points at, or into (a
// reference to #/a/b/c points into #/a and #/a/b): the places flatten leaves as they are.
func pointedAt(v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if ref, ok := e.(string); ok && k == "$ref" && strings.HasPrefix(ref, "#/") {
				if u, err := url.PathUnescape(ref); err == nil {
					ref = u
				}
				for i := len("#/"); i <= len(ref); i++ {
					if i == len(ref) || ref[i] == '/' {
						out[strings.TrimRight(ref[:i], "/")] = true
					}
				}
				continue
			}
			pointedAt(e, out)
		}
	case []any:
		for _, e := range x {
			pointedAt(e, out)
		}
	}
}

// name is a name for a moved schema that the description does not use.
func (f *flattener) name() string {
	for i := len(f.moved) + 1; ; i++ {
		name := fmt.Sprintf("%s%d", hoistPrefix, i)
		if _, taken := f.taken[name]; !taken {
			if _, moved := f.moved[name]; !moved {
				return name
			}
		}
	}
}
