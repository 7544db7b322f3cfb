package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboard-hub/switchboard/internal/describedfake"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/openapi"
	"github.com/switchboard-hub/switchboard/providers/providertest"
	"github.com/switchboard-hub/switchboard/providers/schemacheck"
)

// TestCatalogToolsAgainstTheirDescriptions calls every default tool of every catalog
// API against a fake upstream made from the API's own description: the fake routes the
// request to the description's operation and checks its method, path, parameters, body
// and credential (openapi3filter), and answers with a body generated from the
// operation's success response schema, itself checked against that schema; the tool's
// result must match the tool's output schema, and the tool must have run the operation
// its preset names. No tool takes a credential as an input, and every request carries
// the connection's, each part where its preset puts it (Trello's key and token). The
// listed schemas of every default tool must pass every vendor's
// portable-schema checker.
func TestCatalogToolsAgainstTheirDescriptions(t *testing.T) {
	presets, err := Presets()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range presets {
		t.Run(p.Name, func(t *testing.T) {
			spec, data := servedSpec(t, p)
			tools := providertest.Tools(t, spec)
			listed := make([]*providers.Tool, 0, len(tools))
			for _, tl := range tools {
				listed = append(listed, tl)
			}
			for vendor, bad := range schemacheck.Tools(listed, "") {
				t.Errorf("%s refuses %d tools: %s", vendor, len(bad), strings.Join(bad, "; "))
			}
			doc, err := openapi.Load(t.Context(), data)
			if err != nil {
				t.Fatal(err)
			}
			base, err := url.Parse(spec.BaseURL)
			if err != nil {
				t.Fatal(err)
			}
			up := describedfake.New(t, doc, base.Path, nil)
			token := connectionToken(p)
			for _, pt := range p.Tools {
				tool := tools[p.Name+"_"+pt.Name]
				if tool == nil {
					t.Errorf("no tool %s_%s", p.Name, pt.Name)
					continue
				}
				generated, body := arguments(t, tool, doc, pt.Operation)
				if !body {
					t.Errorf("%s: the operation %s takes a request body, but the tool lists no body input", tool.Name, pt.Operation)
				}
				args, err := json.Marshal(generated)
				if err != nil {
					t.Fatal(err)
				}
				for _, prop := range credentialInputs(tool, p, doc) {
					t.Errorf("%s takes the credential %s as an input: it comes from the connection", tool.Name, prop)
				}
				if err := tool.Validate(args); err != nil {
					t.Errorf("%s: the generated arguments %s do not fit its input schema: %v", tool.Name, args, err)
					continue
				}
				before := len(up.Matched())
				out, err := tool.Op.Invoke(context.Background(), providertest.NewCall(t, &spec, up.URL+base.Path, token), args)
				if err != nil {
					t.Errorf("%s(%s): %v", tool.Name, args, err)
					continue
				}
				seen := up.Matched()
				if len(seen) != before+1 || seen[len(seen)-1] != pt.Operation {
					t.Errorf("%s ran %v, want the operation %s", tool.Name, seen[before:], pt.Operation)
				}
				checkOutput(t, tool, out)
				if reqs := up.Requests(); len(reqs) > 0 {
					if err := carriesConnection(reqs[len(reqs)-1], p, token); err != nil {
						t.Errorf("%s: %v", tool.Name, err)
					}
				}
			}
			up.Check(t)
		})
	}
}

// connectionToken is the credential of a test connection to a catalog API: one of
// each part, KEY:TOKEN, when its preset's credential has several (APIKey.Parts).
func connectionToken(p Preset) string {
	if p.APIKey == nil || len(p.APIKey.Parts) == 0 {
		return "catalog-token"
	}
	values := make([]string, len(p.APIKey.Parts))
	for i, name := range p.APIKey.Parts {
		values[i] = "catalog-" + name
	}
	return strings.Join(values, ":")
}

// credentialInputs are the input properties of a tool named like a place of the
// connection's credential: its preset's api_key, or an apiKey scheme of the
// description.
func credentialInputs(tool *providers.Tool, p Preset, doc *openapi3.T) []string {
	var places []string
	if k := p.APIKey; k != nil {
		places = append(places, k.Parts...)
		places = append(places, k.Name)
	}
	if doc.Components != nil {
		for _, ref := range doc.Components.SecuritySchemes {
			if ref != nil && ref.Value != nil && ref.Value.Type == "apiKey" {
				places = append(places, ref.Value.Name)
			}
		}
	}
	schema := map[string]any{}
	in, _ := tool.Listed()
	_ = json.Unmarshal(in, &schema)
	props, _ := schema["properties"].(map[string]any)
	var out []string
	for prop := range props {
		for _, place := range places {
			if place != "" && strings.EqualFold(prop, place) {
				out = append(out, prop)
			}
		}
	}
	return out
}

// carriesConnection says how a request fails to carry the connection's credential:
// each part where its preset places it, else the token in a header (bearer, a prefix),
// a query parameter or HTTP basic's user.
func carriesConnection(r providertest.Request, p Preset, token string) error {
	if k := p.APIKey; k != nil && len(k.Parts) > 0 {
		for _, name := range k.Parts {
			got := r.Query[name]
			if k.In == "header" {
				got = r.Header.Values(name)
			}
			if len(got) != 1 || got[0] != "catalog-"+name {
				return fmt.Errorf("the request carries the %s %s %q, want the connection's %q alone", k.In, name, got, "catalog-"+name)
			}
		}
		return nil
	}
	for _, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, token) {
				return nil
			}
		}
	}
	for _, vs := range r.Query {
		if slices.Contains(vs, token) {
			return nil
		}
	}
	if user, _, ok := (&http.Request{Header: r.Header}).BasicAuth(); ok && user == token {
		return nil
	}
	return fmt.Errorf("the request does not carry the connection's credential (headers %v, query %v)", slices.Sorted(maps.Keys(r.Header)), r.Query)
}

// arguments are the least arguments of a tool: its required parameters from its input
// schema, and a body generated from the request body schema of the description's
// operation, each required property set, or in a JSON body one optional property when
// none is required, so that the body the tool sends carries a value. body is false
// when the operation takes a request body with properties (of any media type) that the
// tool lists no input for.
func arguments(t *testing.T, tool *providers.Tool, doc *openapi3.T, operationID string) (args map[string]any, body bool) {
	schema := schemaOf(t, tool)
	defs, _ := schema["$defs"].(map[string]any)
	args, _ = sample(resolveDefs(schema, defs, 0).(map[string]any), 0).(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	body = true
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.OperationID != operationID || op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			for _, mt := range op.RequestBody.Value.Content {
				if mt.Schema != nil && mt.Schema.Value != nil && len(mt.Schema.Value.Properties) > 0 {
					body = false // a body with properties, of any media type
				}
			}
			for _, name := range []string{"request_body", "body"} {
				if _, ok := props[name]; !ok {
					continue
				}
				body = true
				for _, ct := range sortedKeys(op.RequestBody.Value.Content) {
					ref := op.RequestBody.Value.Content[ct].Schema
					v := describedfake.Generate(ref, true)
					if m, ok := v.(map[string]any); ok && len(m) == 0 && isJSON(ct) && ref != nil && ref.Value != nil {
						setOneProperty(m, ref.Value)
					}
					args[name] = v
					break
				}
				break
			}
		}
	}
	return args, body
}

// setOneProperty sets in m the first (by name) property of s that a request may carry
// and whose value is a string, a number or a boolean.
func setOneProperty(m map[string]any, s *openapi3.Schema) {
	for _, name := range sortedKeys(s.Properties) {
		p := s.Properties[name]
		if p == nil || p.Value == nil || p.Value.ReadOnly || p.Value.Type == nil || len(p.Value.Enum) > 0 {
			continue
		}
		if p.Value.Type.Includes("string") || p.Value.Type.Includes("integer") || p.Value.Type.Includes("number") || p.Value.Type.Includes("boolean") {
			m[name] = describedfake.Generate(p, true)
			return
		}
	}
}

func isJSON(mediaType string) bool {
	mediaType = strings.ToLower(strings.TrimSpace(strings.Split(mediaType, ";")[0]))
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// resolveDefs replaces a schema's references to its own $defs with what they name.
func resolveDefs(v any, defs map[string]any, depth int) any {
	if depth > 30 {
		return map[string]any{}
	}
	switch v := v.(type) {
	case map[string]any:
		if r, ok := v["$ref"].(string); ok && strings.HasPrefix(r, "#/$defs/") {
			return resolveDefs(defs[strings.TrimPrefix(r, "#/$defs/")], defs, depth+1)
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = resolveDefs(x, defs, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = resolveDefs(x, defs, depth+1)
		}
		return out
	}
	return v
}

// schemaOf is a tool's input schema as JSON values.
func schemaOf(t *testing.T, tool *providers.Tool) map[string]any {
	in, _ := tool.Listed()
	var s map[string]any
	if err := json.Unmarshal(in, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// checkOutput fails t unless out matches the tool's output schema.
func checkOutput(t *testing.T, tool *providers.Tool, out any) {
	t.Helper()
	_, outSchema := tool.Listed()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(outSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("output.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("output.json")
	if err != nil {
		t.Fatalf("%s: output schema: %v", tool.Name, err)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s: its result does not match its output schema: %v", tool.Name, err)
	}
}

// sample is the least value a JSON schema admits: an enum's first value, a minimum, a
// required property each, one item where items are required.
func sample(s map[string]any, depth int) any {
	if s == nil || depth > 12 {
		return nil
	}
	if v, ok := s["const"]; ok {
		return v
	}
	if enum, ok := s["enum"].([]any); ok {
		for _, v := range enum {
			if v != nil {
				return v
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && m["type"] != "null" {
					return sample(m, depth+1)
				}
			}
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		merged := map[string]any{}
		for _, a := range all {
			if m, ok := sample(a.(map[string]any), depth+1).(map[string]any); ok {
				for k, v := range m {
					merged[k] = v
				}
			}
		}
		return merged
	}
	typ := s["type"]
	if list, ok := typ.([]any); ok {
		typ = nil
		for _, v := range list {
			if v != "null" {
				typ = v
				break
			}
		}
	}
	switch typ {
	case "string":
		if format, _ := s["format"].(string); format != "" {
			if v, ok := describedfake.FormatSample(format); ok {
				return v
			}
		}
		v := "x"
		if p, ok := s["pattern"].(string); ok {
			if g, ok := describedfake.FromPattern(p); ok {
				return g
			}
		}
		if n, ok := s["minLength"].(float64); ok && n > 1 {
			v = strings.Repeat("x", int(n))
		}
		return v
	case "integer", "number":
		v := 1.0
		if m, ok := s["minimum"].(float64); ok {
			v = m
		}
		if m, ok := s["exclusiveMinimum"].(float64); ok {
			v = m + 1
		}
		if m, ok := s["maximum"].(float64); ok && v > m {
			v = m
		}
		return v
	case "boolean":
		return true
	case "array":
		n := 1
		if m, ok := s["minItems"].(float64); ok {
			n = int(m)
		}
		items, _ := s["items"].(map[string]any)
		out := []any{}
		for range n {
			out = append(out, sample(items, depth+1))
		}
		return out
	case "object", nil:
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		out := map[string]any{}
		for _, r := range req {
			name, _ := r.(string)
			if p, ok := props[name].(map[string]any); ok {
				out[name] = sample(p, depth+1)
			} else {
				out[name] = "x"
			}
		}
		return out
	}
	return nil
}

// servedSpec builds the preset's provider from its shipped description made servable
// by a described fake (describedfake.Servable), and returns it with that description.
func servedSpec(t *testing.T, p Preset) (providers.Spec, []byte) {
	t.Helper()
	shipped, err := Description(p.Name)
	if err != nil {
		t.Fatal(err)
	}
	data := describedfake.Servable(t, shipped)
	spec, err := build(t.Context(), p, data)
	if err != nil {
		t.Fatal(err)
	}
	return spec, data
}
