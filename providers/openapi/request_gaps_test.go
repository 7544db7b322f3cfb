package openapi

import (
	"net/http"
	"slices"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/describedfake"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// callDescribed builds a provider from doc against a fake upstream generated from it,
// calls tool with args, and returns the request the fake received, after checking that
// the description accepts it.
func callDescribed(t *testing.T, doc, tool, args string) providertest.Request {
	t.Helper()
	d, err := Load(t.Context(), []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	up := describedfake.New(t, d, "", providertest.Answer(http.StatusOK, nil, `{}`))
	spec, err := FromDocument(t.Context(), d, Options{Name: "api", BaseURL: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	tl := providertest.Tools(t, spec)[tool]
	if tl == nil {
		t.Fatalf("no tool %s", tool)
	}
	if _, err := providertest.Invoke(t, tl, providertest.NewCall(t, &spec, spec.BaseURL, "k"), args); err != nil {
		t.Fatal(err)
	}
	up.Check(t)
	return up.Last(t)
}

// TestRequiredContentType: a Content-Type header parameter an operation requires is
// sent (its default, its first enum value, or the body's media type) though it is not
// an argument, and a body is sent with the media type its description names.
func TestRequiredContentType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc, tool, args, want string
	}{
		{name: "enum, no body", tool: "api_get_report", args: `{}`, want: "application/vnd.report+json",
			doc: `{"openapi":"3.0.0","info":{"title":"T","version":"1"},"paths":{"/report":{"get":{"operationId":"getReport",
"parameters":[{"name":"Content-Type","in":"header","required":true,"schema":{"type":"string","enum":["application/vnd.report+json"]}}],
"responses":{"200":{"description":"ok"}}}}}}`},
		{name: "from the body, on the path item", tool: "api_put_doc", args: `{"body":{"a":1}}`, want: "application/merge-patch+json",
			doc: `{"openapi":"3.0.0","info":{"title":"T","version":"1"},"paths":{"/doc":{
"parameters":[{"name":"content-type","in":"header","required":true,"schema":{"type":"string"}}],
"put":{"operationId":"putDoc","requestBody":{"required":true,"content":{"application/merge-patch+json":{"schema":{"type":"object"}}}},
"responses":{"200":{"description":"ok"}}}}}}`},
		{name: "a body's own media type", tool: "api_patch_doc", args: `{"body":{"a":1}}`, want: "application/merge-patch+json",
			doc: `{"openapi":"3.0.0","info":{"title":"T","version":"1"},"paths":{"/doc":{
"patch":{"operationId":"patchDoc","requestBody":{"required":true,"content":{"application/merge-patch+json":{"schema":{"type":"object"}}}},
"responses":{"200":{"description":"ok"}}}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := callDescribed(t, tt.doc, tt.tool, tt.args)
			if got := r.Header.Get("Content-Type"); got != tt.want {
				t.Errorf("Content-Type = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSwagger2RequiredBody: a Swagger 2.0 body the description requires is required in
// the tool's input, whether the body parameter is inline, given by reference, or made of
// required formData parameters; and it reaches the upstream.
func TestSwagger2RequiredBody(t *testing.T) {
	t.Parallel()
	head := `{"swagger":"2.0","info":{"title":"Old","version":"1"},"host":"old.example.test","schemes":["https"],`
	tests := []struct {
		name, doc, args string
	}{
		{name: "inline", args: `{"id":"a","body":{"n":1}}`, doc: head + `"paths":{"/items/{id}":{"put":{"operationId":"putItem","consumes":["application/json"],
"parameters":[{"name":"id","in":"path","required":true,"type":"string"},{"name":"item","in":"body","required":true,"schema":{"type":"object"}}],
"responses":{"200":{"description":"ok"}}}}}}`},
		{name: "by reference", args: `{"id":"a","body":{"n":1}}`, doc: head + `"parameters":{"ItemBody":{"name":"item","in":"body","required":true,"schema":{"type":"object"}}},
"paths":{"/items/{id}":{"put":{"operationId":"putItem","consumes":["application/json"],
"parameters":[{"name":"id","in":"path","required":true,"type":"string"},{"$ref":"#/parameters/ItemBody"}],
"responses":{"200":{"description":"ok"}}}}}}`},
		{name: "formData", args: `{"id":"a","body":{"n":"x"}}`, doc: head + `"paths":{"/items/{id}":{"put":{"operationId":"putItem","consumes":["application/x-www-form-urlencoded"],
"parameters":[{"name":"id","in":"path","required":true,"type":"string"},{"name":"n","in":"formData","required":true,"type":"string"},{"name":"m","in":"formData","type":"string"}],
"responses":{"200":{"description":"ok"}}}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec, err := New(t.Context(), []byte(tt.doc), Options{Name: "api"})
			if err != nil {
				t.Fatal(err)
			}
			tool := providertest.Tools(t, spec)["api_put_item"]
			req, _ := schemaOf(t, tool.InputSchema)["required"].([]any)
			if !slices.Contains(req, any("body")) {
				t.Errorf("input schema requires %v, want the body too: %s", req, tool.InputSchema)
			}
			if err := tool.Validate([]byte(`{"id":"a"}`)); err == nil {
				t.Error("a call without the body validates")
			}
			r := callDescribed(t, tt.doc, "api_put_item", tt.args)
			if len(r.Body) == 0 {
				t.Error("the body was not sent")
			}
		})
	}
}
