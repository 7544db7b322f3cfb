package openapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// credentialParamsDoc declares its API keys twice, as Trello's description does: as
// apiKey schemes and as each operation's parameters of the same name and place.
const credentialParamsDoc = `{"openapi":"3.0.0","info":{"title":"Keys","version":"1"},
"servers":[{"url":"https://keys.example.test"}],
"components":{"securitySchemes":{
 "key":{"type":"apiKey","in":"query","name":"key"},
 "app":{"type":"apiKey","in":"header","name":"X-App-Id"}}},
"security":[{"key":[]}],
"paths":{
 "/things":{"get":{"operationId":"listThings","parameters":[
  {"name":"key","in":"query","required":true,"schema":{"type":"string"}},
  {"name":"limit","in":"query","schema":{"type":"integer"}},
  {"name":"X-Extra-Secret","in":"header","required":true,"schema":{"type":"string"}}],
  "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object"}}}}}}},
 "/other":{"get":{"operationId":"getOther","security":[{"key":[]},{"app":[]}],"parameters":[
  {"name":"x-app-id","in":"header","required":true,"schema":{"type":"string"}},
  {"name":"key","in":"query","required":true,"schema":{"type":"string"}},
  {"name":"q","in":"query","schema":{"type":"string"}}],
  "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object"}}}}}}}}}`

// TestSecuritySchemeParametersComeFromTheConnection: a parameter that one of an
// operation's security schemes names (an apiKey scheme's name and place, a header's in
// any case), or that Options.Credential names, is no input of its tool: it is neither
// listed nor taken from the arguments, and the request carries the connection's
// credential there.
func TestSecuritySchemeParametersComeFromTheConnection(t *testing.T) {
	t.Parallel()
	spec, err := New(t.Context(), []byte(credentialParamsDoc), Options{Name: "keys", Credential: []Place{{In: "header", Name: "x-extra-secret"}}})
	if err != nil {
		t.Fatal(err)
	}
	tools := providertest.Tools(t, spec)
	for name, want := range map[string][]string{"keys_list_things": {"limit"}, "keys_get_other": {"q"}} {
		tool := tools[name]
		if tool == nil {
			t.Fatalf("no tool %s among %v", name, tools)
		}
		in, _ := tool.Listed()
		s := schemaOf(t, in)
		props, _ := s["properties"].(map[string]any)
		var got []string
		for p := range props {
			got = append(got, p)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) || s["required"] != nil {
			t.Errorf("%s lists the inputs %v (required %v), want %v alone: a credential is no input", name, got, s["required"], want)
		}
	}

	up := providertest.NewUpstream(t, providertest.Answer(http.StatusOK, nil, `{}`))
	call := providertest.NewCall(t, &spec, up.URL, "connection-key")
	args := json.RawMessage(`{"key":"argument-key","X-Extra-Secret":"argument-secret","x-app-id":"argument-app","limit":2,"q":"x"}`)
	for _, name := range []string{"keys_list_things", "keys_get_other"} {
		if _, err := tools[name].Op.Invoke(context.Background(), call, args); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, r := range up.Requests() {
		if got := r.Query["key"]; !slices.Equal(got, []string{"connection-key"}) {
			t.Errorf("%s carries key=%v, want the connection's credential alone", r.Path, got)
		}
		for _, h := range []string{"X-App-Id", "X-Extra-Secret"} {
			if v := r.Header.Get(h); v != "" {
				t.Errorf("%s carries %s: %q from the arguments", r.Path, h, v)
			}
		}
	}
	if len(up.Requests()) != 2 {
		t.Errorf("%d requests, want 2", len(up.Requests()))
	}
}
