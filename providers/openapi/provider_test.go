package openapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/describedfake"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

func petstore(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/petstore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// schemaOf decodes a tool's schema for inspection.
func schemaOf(t testing.TB, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// at walks a decoded schema by keys.
func at(m any, keys ...string) any {
	for _, k := range keys {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		m = mm[k]
	}
	return m
}

// TestTools: every operation becomes a tool named {name}_{operation}, with its
// description, hints from its method (and x-destructive), an input schema from its
// parameters and request body (references inlined, readOnly properties left out, a
// recursive schema cut), and an output schema from its success answer.
func TestTools(t *testing.T) {
	t.Parallel()
	spec, err := New(t.Context(), petstore(t), Options{Name: "pets"})
	if err != nil {
		t.Fatal(err)
	}
	if spec.BaseURL != "https://eu.pets.example.test/v1" || spec.Title != "Pet Store" || spec.Description != "Pets, their owners and their visits." {
		t.Errorf("spec = %q %q %q", spec.BaseURL, spec.Title, spec.Description)
	}
	tools := providertest.Tools(t, spec)
	var names []string
	for _, op := range spec.Operations {
		names = append(names, "pets_"+op.Info().Name)
	}
	want := []string{"pets_post_owners_owner_id_visits", "pets_list_pets", "pets_create_pet", "pets_show_pet_by_id", "pets_delete_pet"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	hints := map[string]providers.Hints{
		"pets_list_pets":                   {ReadOnly: true},
		"pets_create_pet":                  {},
		"pets_delete_pet":                  {Idempotent: true, Destructive: true},
		"pets_post_owners_owner_id_visits": {},
	}
	for name, h := range hints {
		if got := tools[name].Info.Hints; got != h {
			t.Errorf("%s hints = %+v, want %+v", name, got, h)
		}
	}
	if d := tools["pets_list_pets"].Info; d.Title != "List pets" || d.Description != "List pets\n\nPets, newest first." {
		t.Errorf("list_pets info = %q %q", d.Title, d.Description)
	}
	create := schemaOf(t, tools["pets_create_pet"].InputSchema)
	if diff := cmp.Diff([]any{"body"}, create["required"]); diff != "" {
		t.Errorf("create_pet required (-want +got):\n%s", diff)
	}
	body := at(create, "properties", "body")
	if at(body, "properties", "id") != nil {
		t.Error("create_pet's input has the readOnly id")
	}
	checks := map[string]any{
		"type":                               "object",
		"required":                           []any{"name"},
		"properties/name/maxLength":          float64(64),
		"properties/kind/type":               []any{"string", "null"},
		"properties/kind/enum":               []any{"cat", "dog", "fish", nil},
		"properties/weight/exclusiveMinimum": float64(0),
		"properties/parent":                  true, // Pet inside Pet: cut, any value (the schema true)
		"properties/secret/type":             "string",
	}
	for path, want := range checks {
		if diff := cmp.Diff(want, at(body, strings.Split(path, "/")...)); diff != "" {
			t.Errorf("create_pet body %s (-want +got):\n%s", path, diff)
		}
	}
	show := schemaOf(t, tools["pets_show_pet_by_id"].OutputSchema)
	if at(show, "properties", "body", "properties", "secret") != nil || at(show, "properties", "body", "properties", "name", "type") != "string" {
		t.Errorf("show_pet_by_id output = %v; want the pet without its writeOnly secret", show)
	}
	if at(show, "properties", "body", "required") != nil {
		t.Error("an output schema insists on required properties; answers stray from descriptions")
	}
	visits := schemaOf(t, tools["pets_post_owners_owner_id_visits"].InputSchema)
	for _, prop := range []string{"ownerId", "query_ownerId", "clinic", "body"} {
		if at(visits, "properties", prop) == nil {
			t.Errorf("visits input has no %s: %v", prop, visits)
		}
	}
	if at(schemaOf(t, tools["pets_list_pets"].InputSchema), "properties", "Accept") != nil {
		t.Error("list_pets takes an Accept header, which HTTP sets itself")
	}
	for name, tool := range tools {
		if _, err := providers.NewValidator(tool.OutputSchema); err != nil {
			t.Errorf("%s output schema does not compile: %v", name, err)
		}
	}
	if err := tools["pets_show_pet_by_id"].Validate(json.RawMessage(`{"petId":0}`)); switchboard.CodeOf(err) != switchboard.CodeInvalid || !strings.Contains(err.Error(), "petId") {
		t.Errorf("petId 0 against minimum 1: %v", err)
	}
}

// TestRequests: each tool's request is built as its description says (path, query,
// headers, cookies, JSON or form body), carries the credential where the description's
// security scheme puts it, and passes the description's own validation at a fake
// upstream generated from it; the answer is decoded.
func TestRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		auth   string
		tool   string
		args   string
		status int
		answer string
		ctype  string
		want   Output
		check  func(t *testing.T, r providertest.Request)
	}{
		{name: "query parameters and a header", tool: "pets_list_pets", args: `{"limit":5,"tag":["a","b c"],"X-Request-Id":"req-1"}`,
			answer: `[{"id":1,"name":"Rex"}]`, want: Output{Body: []any{map[string]any{"id": float64(1), "name": "Rex"}}},
			check: func(t *testing.T, r providertest.Request) {
				if diff := cmp.Diff(url.Values{"limit": {"5"}, "tag": {"a", "b c"}, "api_key": {"secret-key"}}, r.Query); diff != "" {
					t.Errorf("query (-want +got):\n%s", diff)
				}
				if r.Header.Get("X-Request-Id") != "req-1" || r.Method != http.MethodGet || r.Path != "/v1/pets" {
					t.Errorf("request = %s %s %v", r.Method, r.Path, r.Header)
				}
			}},
		{name: "path parameter and a comma-joined array", tool: "pets_show_pet_by_id", args: `{"petId":42,"fields":["name","kind"]}`,
			answer: `{"id":42,"name":"Rex"}`, want: Output{Body: map[string]any{"id": float64(42), "name": "Rex"}},
			check: func(t *testing.T, r providertest.Request) {
				if r.Path != "/v1/pets/42" || r.Query.Get("fields") != "name,kind" {
					t.Errorf("request = %s ? %v", r.Path, r.Query)
				}
			}},
		{name: "JSON body", auth: "apiKeyHeader", tool: "pets_create_pet", args: `{"body":{"name":"Rex","tags":["good"]}}`, status: http.StatusCreated,
			answer: `{"id":7,"name":"Rex"}`, want: Output{Body: map[string]any{"id": float64(7), "name": "Rex"}},
			check: func(t *testing.T, r providertest.Request) {
				if r.Method != http.MethodPost || r.ContentType != "application/json" || string(r.Body) != `{"name":"Rex","tags":["good"]}` {
					t.Errorf("request = %s %s %s", r.Method, r.ContentType, r.Body)
				}
				if r.Header.Get("X-Api-Key") != "secret-key" || r.Query.Get("api_key") != "" || r.Header.Get("Authorization") != "" {
					t.Errorf("credential not in X-Api-Key alone: %v %v", r.Header, r.Query)
				}
			}},
		{name: "form body, cookie and a parameter in two places", auth: "apiKeyCookie", tool: "pets_post_owners_owner_id_visits",
			args:  `{"ownerId":"o/1","query_ownerId":"q","clinic":"north","body":{"day":"2026-01-02","reasons":["cough","limp"]}}`,
			ctype: "text/plain", answer: "booked", want: Output{Body: "booked"},
			check: func(t *testing.T, r providertest.Request) {
				if r.Path != "/v1/owners/o/1/visits" || r.Query.Get("ownerId") != "q" {
					t.Errorf("request = %s ? %v", r.Path, r.Query)
				}
				form, _ := url.ParseQuery(string(r.Body))
				if r.ContentType != "application/x-www-form-urlencoded" || form.Get("day") != "2026-01-02" || len(form["reasons"]) != 2 {
					t.Errorf("form = %s %s", r.ContentType, r.Body)
				}
				if c := r.Header.Get("Cookie"); !strings.Contains(c, "clinic=north") || !strings.Contains(c, "session=secret-key") {
					t.Errorf("cookies = %q", c)
				}
			}},
		{name: "bearer", auth: "bearer", tool: "pets_delete_pet", args: `{"petId":3}`, status: http.StatusNoContent,
			check: func(t *testing.T, r providertest.Request) {
				if r.Method != http.MethodDelete || r.Header.Get("Authorization") != "Bearer secret-key" {
					t.Errorf("request = %s %v", r.Method, r.Header)
				}
			}},
		{name: "basic", auth: "basic", tool: "pets_delete_pet", args: `{"petId":3}`, status: http.StatusNoContent,
			check: func(t *testing.T, r providertest.Request) {
				if r.Header.Get("Authorization") != "Basic dXNlcjpwYXNz" { // user:pass
					t.Errorf("Authorization = %q", r.Header.Get("Authorization"))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := Load(t.Context(), petstore(t))
			if err != nil {
				t.Fatal(err)
			}
			status := tt.status
			if status == 0 {
				status = http.StatusOK
			}
			header := http.Header{}
			if tt.ctype != "" {
				header.Set("Content-Type", tt.ctype)
			}
			if tt.auth != "" { // the fake checks the scheme the connection uses
				doc.Security = openapi3.SecurityRequirements{{tt.auth: []string{}}}
			}
			up := describedfake.New(t, doc, "/v1", providertest.Answer(status, header, tt.answer))
			spec, err := FromDocument(t.Context(), doc, Options{Name: "pets", Auth: tt.auth, BaseURL: up.URL + "/v1"})
			if err != nil {
				t.Fatal(err)
			}
			token := "secret-key"
			if tt.auth == "basic" {
				token = "user:pass"
			}
			out, err := providertest.Invoke(t, providertest.Tools(t, spec)[tt.tool], providertest.NewCall(t, &spec, spec.BaseURL, token), tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			up.Check(t)
			reqs := up.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			tt.check(t, reqs[0])
		})
	}
}

// TestFailures: the upstream's refusals become classified errors with its own message.
func TestFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		header     http.Header
		body       string
		wantCode   switchboard.Code
		wantMsg    string
		wantReason string
	}{
		{name: "not found", status: http.StatusNotFound, body: `{"message":"no such pet","code":"pet_not_found"}`, wantCode: switchboard.CodeNotFound, wantMsg: "no such pet", wantReason: "pet_not_found"},
		{name: "nested error", status: http.StatusBadRequest, body: `{"error":{"message":"name is too long","type":"invalid_request"}}`, wantCode: switchboard.CodeInvalid, wantMsg: "name is too long", wantReason: "invalid_request"},
		{name: "credential refused", status: http.StatusUnauthorized, body: `{"error":"bad key"}`, wantCode: switchboard.CodeReconnect, wantMsg: "bad key"},
		{name: "rate limited", status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"120"}}, body: `slow down`, wantCode: switchboard.CodeRateLimited, wantMsg: "slow down"},
		{name: "text error", status: http.StatusConflict, header: http.Header{"Content-Type": {"text/plain"}}, body: "already exists", wantCode: switchboard.CodeConflict, wantMsg: "already exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, providertest.Answer(tt.status, tt.header, tt.body))
			spec, err := New(t.Context(), petstore(t), Options{Name: "pets", BaseURL: up.URL})
			if err != nil {
				t.Fatal(err)
			}
			_, err = providertest.Invoke(t, providertest.Tools(t, spec)["pets_create_pet"], providertest.NewCall(t, &spec, spec.BaseURL, "k"), `{"body":{"name":"Rex"}}`)
			var ue *providers.UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("error = %v, want an UpstreamError", err)
			}
			if ue.Code != tt.wantCode || !strings.Contains(ue.Message, tt.wantMsg) || ue.Reason != tt.wantReason || ue.Provider != "pets" {
				t.Errorf("error = %+v, want code %s, message %q, reason %q", ue, tt.wantCode, tt.wantMsg, tt.wantReason)
			}
		})
	}
}

// TestBadInput: a description or options that cannot make a provider are refused with
// the field and the reason.
func TestBadInput(t *testing.T) {
	t.Parallel()
	relative := `{"openapi":"3.0.0","info":{"title":"R","version":"1"},"servers":[{"url":"/api"}],"paths":{"/x":{"get":{"responses":{"200":{"description":"ok"}}}}}}`
	external := `{"openapi":"3.0.0","info":{"title":"R","version":"1"},"paths":{"/x":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"http://127.0.0.1:1/other.json#/S"}}}}}}}}}`
	tests := []struct {
		name  string
		doc   string
		o     Options
		field string
		msg   string
	}{
		{name: "bad name", o: Options{Name: "Pets!"}, field: "name", msg: "snake_case"},
		{name: "unknown scheme", o: Options{Name: "pets", Auth: "magic"}, field: "auth", msg: "apiKeyCookie, apiKeyHeader"},
		{name: "unknown operation", o: Options{Name: "pets", Operations: []string{"listPets", "feedPets"}}, field: "operations", msg: `"feedPets"`},
		{name: "no operation chosen", o: Options{Name: "pets", Tags: []string{"nothing"}}, field: "operations", msg: "no operation"},
		{name: "bad base URL", o: Options{Name: "pets", BaseURL: "ftp://x"}, field: "base_url", msg: "http or https"},
		{name: "relative servers", doc: relative, o: Options{Name: "r"}, field: "base_url", msg: `"/api"`},
		{name: "not a description", doc: `{"hello":"world"}`, o: Options{Name: "r"}, field: "description", msg: "neither"},
		{name: "OpenAPI 4", doc: `{"openapi":"4.0.0"}`, o: Options{Name: "r"}, field: "description", msg: "3.0, 3.1"},
		{name: "not JSON nor YAML", doc: "{{{", o: Options{Name: "r"}, field: "description", msg: "JSON object"},
		{name: "an external reference is not fetched", doc: external, o: Options{Name: "r", BaseURL: "https://r.test"}, field: "description", msg: "not a valid OpenAPI document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := []byte(tt.doc)
			if tt.doc == "" {
				doc = petstore(t)
			}
			_, err := New(t.Context(), doc, tt.o)
			e := switchboard.AsError(err)
			if err == nil || e.Code != switchboard.CodeInvalid || e.Field != tt.field || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("error = %v (field %q), want invalid %s saying %q", err, e.Field, tt.field, tt.msg)
			}
		})
	}
}

// TestSwagger2: a Swagger 2.0 description is converted: host and basePath make the base
// URL, body parameters the request body, and its security definitions the auth.
func TestSwagger2(t *testing.T) {
	t.Parallel()
	doc := `{"swagger":"2.0","info":{"title":"Old","version":"1"},"host":"old.example.test","basePath":"/api","schemes":["https"],
"securityDefinitions":{"key":{"type":"apiKey","in":"header","name":"X-Key"}},"security":[{"key":[]}],
"paths":{"/items/{id}":{"put":{"operationId":"putItem","consumes":["application/json"],"parameters":[
{"name":"id","in":"path","required":true,"type":"string"},
{"name":"body","in":"body","required":true,"schema":{"type":"object","properties":{"n":{"type":"integer"}}}}],
"responses":{"200":{"description":"ok","schema":{"type":"object","properties":{"n":{"type":"integer"}}}}}}}}}`
	spec, err := New(t.Context(), []byte(doc), Options{Name: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if spec.BaseURL != "https://old.example.test/api" {
		t.Errorf("base URL = %q", spec.BaseURL)
	}
	up := providertest.NewUpstream(t, providertest.Answer(http.StatusOK, nil, `{"n":2}`))
	tool := providertest.Tools(t, spec)["old_put_item"]
	if tool == nil || tool.Info.Hints != (providers.Hints{Idempotent: true}) {
		t.Fatalf("tool = %+v", tool)
	}
	out, err := providertest.Invoke(t, tool, providertest.NewCall(t, &spec, up.URL, "k1"), `{"id":"a b","body":{"n":1}}`)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Output{Body: map[string]any{"n": float64(2)}}, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	r := up.Requests()[0]
	if r.Method != http.MethodPut || r.Path != "/items/a b" || string(r.Body) != `{"n":1}` || r.Header.Get("X-Key") != "k1" {
		t.Errorf("request = %s %s %s %v", r.Method, r.Path, r.Body, r.Header)
	}
}

// TestOAuth: an OAuth 2.0 authorization code scheme gives the provider the hub's OAuth
// connect flow, with PKCE and the scheme's scopes.
func TestOAuth(t *testing.T) {
	t.Parallel()
	spec, err := New(t.Context(), petstore(t), Options{Name: "pets", Auth: "oauth"})
	if err != nil {
		t.Fatal(err)
	}
	want := &providers.OAuth2{AuthURL: "https://auth.pets.example.test/authorize", TokenURL: "https://auth.pets.example.test/token", Scopes: []string{"pets:read", "pets:write"}, PKCE: true}
	if diff := cmp.Diff(want, spec.OAuth, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type().Kind() == 0x13 /* func */ }, cmp.Ignore())); diff != "" {
		t.Errorf("OAuth (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]providers.AuthKind{providers.AuthOAuth2, providers.AuthAPIKey}, spec.AuthKinds); diff != "" {
		t.Errorf("auth kinds (-want +got):\n%s", diff)
	}
}

// TestLoadDir: an operator's directory makes one provider per description, named after
// its file, with the options kept beside it; a bad one fails the load naming its file.
func TestLoadDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("pets.yaml", string(petstore(t)))
	write("pets.options.json", `{"base_url":"https://pets.internal/v2","auth":"bearer","tags":["visits"]}`)
	write("notes.txt", "not a description")
	specs, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || specs[0].Name != "pets" || specs[0].BaseURL != "https://pets.internal/v2" || len(specs[0].Operations) != 1 || specs[0].Operations[0].Info().Name != "post_owners_owner_id_visits" {
		t.Fatalf("specs = %+v", specs)
	}
	write("pets.options.json", `{"base_url":"https://pets.internal/v2","scopes":["x"]}`)
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "pets.options.json") || !strings.Contains(err.Error(), "scopes") {
		t.Errorf("unknown option: %v", err)
	}
	write("pets.options.json", `{}`)
	write("Bad-Name.json", `{"openapi":"3.0.0"}`)
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "Bad-Name.json") || !strings.Contains(err.Error(), "snake_case") {
		t.Errorf("bad file name: %v", err)
	}
}
