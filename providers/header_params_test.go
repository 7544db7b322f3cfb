package providers

import (
	"encoding/json"
	"testing"
)

// headersIn returns the x-mcp-header annotations of a listed schema's properties, by
// property path, wherever they are.
func headersIn(t *testing.T, raw json.RawMessage) map[string]string {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var visit func(path string, v any)
	visit = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if h, ok := x[HeaderAnnotation].(string); ok {
				out[path] = h
			}
			for k, e := range x {
				visit(path+"/"+k, e)
			}
		case []any:
			for _, e := range x {
				visit(path+"/[]", e)
			}
		}
	}
	visit("", s)
	return out
}

// Every listing keeps the x-mcp-header annotations SEP-2243 allows and drops the
// others (so no client has to exclude the tool, and the MCP surface can register it):
// one on a non-primitive or a number, one whose name is not an HTTP token, two of the
// same name in different cases (both), one not reached through properties alone. The
// portable profile drops one from the optional argument it lists nullable (anyOf with
// null, no header's type); the gemini profile lists it nullable: true and keeps it.
func TestListingsKeepValidHeaderAnnotations(t *testing.T) {
	t.Parallel()
	full := json.RawMessage(`{"type":"object","required":["region","shard","opts"],"properties":{` +
		`"region":{"type":"string","x-mcp-header":"Region"},` +
		`"shard":{"type":"integer","x-mcp-header":"Shard"},` +
		`"zone":{"type":"string","x-mcp-header":"Zone"},` +
		`"again":{"type":"string","x-mcp-header":"region"},` +
		`"score":{"type":"number","x-mcp-header":"Score"},` +
		`"tags":{"type":"array","items":{"type":"string","x-mcp-header":"Tag"},"x-mcp-header":"Tags"},` +
		`"spaced":{"type":"string","x-mcp-header":"Bad Name"},` +
		`"opts":{"type":"object","required":["dry"],"properties":{"dry":{"type":"boolean","x-mcp-header":"Dry-Run"}}}}}`)
	want := map[SchemaProfile]map[string]string{
		ProfileFull:     {"/properties/shard": "Shard", "/properties/zone": "Zone", "/properties/opts/properties/dry": "Dry-Run"},
		ProfilePortable: {"/properties/shard": "Shard", "/properties/opts/properties/dry": "Dry-Run"},
		ProfileGemini:   {"/properties/shard": "Shard", "/properties/zone": "Zone", "/properties/opts/properties/dry": "Dry-Run"},
	}
	for profile, w := range want {
		var listed json.RawMessage
		var err error
		if profile == ProfileFull {
			listed, err = ListedInput(full)
		} else {
			var l *Listing
			l, err = ListInput(profile, full)
			if l != nil {
				listed = l.Schema
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		got := headersIn(t, listed)
		if len(got) != len(w) {
			t.Errorf("%s: annotations %v, want %v (%s)", profile, got, w, listed)
			continue
		}
		for path, h := range w {
			if got[path] != h {
				t.Errorf("%s: %s has %q, want %q (%s)", profile, path, got[path], h, listed)
			}
		}
	}
}

// WithoutHeaderAnnotations takes every annotation out and leaves the rest as it was.
func TestWithoutHeaderAnnotations(t *testing.T) {
	t.Parallel()
	in := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A","enum":["x-mcp-header"]}}}`)
	if got := string(WithoutHeaderAnnotations(in)); got != `{"properties":{"a":{"enum":["x-mcp-header"],"type":"string"}},"type":"object"}` {
		t.Errorf("got %s", got)
	}
	plain := json.RawMessage(`{"type":"object"}`)
	if got := WithoutHeaderAnnotations(plain); string(got) != string(plain) {
		t.Errorf("a schema with no annotation changed: %s", got)
	}
}
