package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	sj "github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v4"

	"github.com/switchboard-hub/switchboard/api"
)

// openAPIPath is the REST API's machine-readable description, which the tests below
// hold to the routes the API serves and to the bodies it takes and answers.
const openAPIPath = "../docs/reference/openapi.yaml"

// openAPISpec is docs/reference/openapi.yaml, loaded once for every test of the package.
type openAPISpec struct {
	doc      map[string]any
	compiler *sj.Compiler
	paths    []specPath

	mu      sync.Mutex
	schemas map[string]*sj.Schema
}

// specPath is one path of the description with the pattern that matches its URLs.
type specPath struct {
	template string
	params   int
	re       *regexp.Regexp
}

var (
	specOnce sync.Once
	spec     *openAPISpec
	specErr  error
)

// loadSpec parses the description and prepares a JSON Schema 2020-12 compiler over it
// (OpenAPI 3.1's schema dialect), asserting formats such as date-time.
func loadSpec() (*openAPISpec, error) {
	specOnce.Do(func() {
		raw, err := os.ReadFile(openAPIPath)
		if err != nil {
			specErr = err
			return
		}
		var y any
		if err := yaml.Unmarshal(raw, &y); err != nil {
			specErr = fmt.Errorf("%s: %w", openAPIPath, err)
			return
		}
		j, err := json.Marshal(y)
		if err != nil {
			specErr = fmt.Errorf("%s: %w", openAPIPath, err)
			return
		}
		doc, err := sj.UnmarshalJSON(bytes.NewReader(j))
		if err != nil {
			specErr = err
			return
		}
		s := &openAPISpec{doc: doc.(map[string]any), schemas: map[string]*sj.Schema{}}
		s.compiler = sj.NewCompiler()
		s.compiler.DefaultDraft(sj.Draft2020)
		s.compiler.AssertFormat()
		if err := s.compiler.AddResource("file:///openapi.json", doc); err != nil {
			specErr = err
			return
		}
		param := regexp.MustCompile(`\{[^}]+\}`)
		paths, _ := s.doc["paths"].(map[string]any)
		for template := range paths {
			var re strings.Builder
			last := 0
			for _, m := range param.FindAllStringIndex(template, -1) {
				re.WriteString(regexp.QuoteMeta(template[last:m[0]]) + `[^/]+`)
				last = m[1]
			}
			re.WriteString(regexp.QuoteMeta(template[last:]))
			s.paths = append(s.paths, specPath{template: template, params: strings.Count(template, "{"),
				re: regexp.MustCompile("^" + re.String() + "$")})
		}
		// A literal segment wins over a parameter, as in the router.
		slices.SortFunc(s.paths, func(a, b specPath) int { return a.params - b.params })
		spec = s
	})
	return spec, specErr
}

// pointer escapes one JSON pointer token.
func pointer(token string) string {
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// resolve follows an OpenAPI $ref (a response, request body or parameter) to the object
// it names and returns it with its JSON pointer.
func (s *openAPISpec) resolve(obj map[string]any, at string) (map[string]any, string) {
	for {
		ref, ok := obj["$ref"].(string)
		if !ok {
			return obj, at
		}
		at = strings.TrimPrefix(ref, "#")
		var cur any = s.doc
		for _, tok := range strings.Split(strings.TrimPrefix(at, "/"), "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			m, _ := cur.(map[string]any)
			cur = m[tok]
		}
		obj, _ = cur.(map[string]any)
	}
}

// schema compiles (once) the schema at a JSON pointer of the description.
func (s *openAPISpec) schema(at string) (*sj.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.schemas[at]; ok {
		return sch, nil
	}
	sch, err := s.compiler.Compile("file:///openapi.json#" + at)
	if err != nil {
		return nil, err
	}
	s.schemas[at] = sch
	return sch, nil
}

// operation finds the described operation a request reaches, or reports that its path is
// not described (then ok is false).
func (s *openAPISpec) operation(method, urlPath string) (op map[string]any, at string, ok bool) {
	paths, _ := s.doc["paths"].(map[string]any)
	for _, p := range s.paths {
		if !p.re.MatchString(urlPath) {
			continue
		}
		item, _ := paths[p.template].(map[string]any)
		if o, found := item[strings.ToLower(method)].(map[string]any); found {
			return o, "/paths/" + pointer(p.template) + "/" + strings.ToLower(method), true
		}
	}
	return nil, "", false
}

// content picks the media type object of a request body or response for a content type.
func content(obj map[string]any, at, contentType string) (string, bool) {
	c, _ := obj["content"].(map[string]any)
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", false
	}
	if _, ok := c[mt]; !ok {
		return "", false
	}
	return at + "/content/" + pointer(mt) + "/schema", true
}

// validate holds one exchange with the API to the description: a request the API
// accepted (2xx) must match its operation's request body schema, and every answer its
// operation's response for that status (or the default error), by content type and body.
// Paths the description does not hold are the route test's concern, not this one's.
func (s *openAPISpec) validate(method, urlPath string, reqBody []byte, status int, contentType string, respBody []byte) error {
	if method == http.MethodHead {
		return nil
	}
	op, at, ok := s.operation(method, urlPath)
	if !ok {
		if status < 400 || len(respBody) == 0 {
			return nil
		}
		// A method a described path does not take, or a path nobody serves: the error body.
		return s.check("/components/schemas/Error", respBody)
	}
	if status >= 200 && status < 300 && len(bytes.TrimSpace(reqBody)) > 0 {
		rb, ok := op["requestBody"].(map[string]any)
		if !ok {
			return fmt.Errorf("request body sent and accepted, but the operation describes none")
		}
		rb, rbAt := s.resolve(rb, at+"/requestBody")
		sch, ok := content(rb, rbAt, "application/json")
		if !ok {
			return fmt.Errorf("request body not described as application/json")
		}
		if err := s.check(sch, reqBody); err != nil {
			return fmt.Errorf("request body: %w", err)
		}
	}
	responses, _ := op["responses"].(map[string]any)
	respAt := at + "/responses/" + strconv.Itoa(status)
	resp, ok := responses[strconv.Itoa(status)].(map[string]any)
	if !ok {
		resp, ok = responses["default"].(map[string]any)
		respAt = at + "/responses/default"
	}
	if !ok {
		return fmt.Errorf("status %d is not described", status)
	}
	resp, respAt = s.resolve(resp, respAt)
	if len(respBody) == 0 {
		if _, described := resp["content"]; described && status != http.StatusNotModified {
			return fmt.Errorf("status %d: empty body, but the description gives it content", status)
		}
		return nil
	}
	sch, ok := content(resp, respAt, contentType)
	if !ok {
		return fmt.Errorf("status %d: answer of type %q, which the description does not give", status, contentType)
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "application/json" {
		return nil
	}
	if err := s.check(sch, respBody); err != nil {
		return fmt.Errorf("status %d answer: %w", status, err)
	}
	return nil
}

func (s *openAPISpec) check(at string, body []byte) error {
	sch, err := s.schema(at)
	if err != nil {
		return fmt.Errorf("compile %s: %w", at, err)
	}
	v, err := sj.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON (%v): %.200s", err, body)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("does not match %s: %#v\nbody: %.500s", at, err, body)
	}
	return nil
}

// checkExchange fails t when an exchange does not match docs/reference/openapi.yaml.
func checkExchange(t testing.TB, method, urlPath string, reqBody []byte, res *http.Response, respBody []byte) {
	t.Helper()
	s, err := loadSpec()
	if err != nil {
		t.Fatalf("load %s: %v", openAPIPath, err)
	}
	if err := s.validate(method, urlPath, reqBody, res.StatusCode, res.Header.Get("Content-Type"), respBody); err != nil {
		t.Errorf("%s %s: docs/reference/openapi.yaml: %v", method, urlPath, err)
	}
}

// TestOpenAPIDescribesEveryRoute checks that docs/reference/openapi.yaml describes
// exactly the routes the API serves: a route added without a description, or a
// description of a route that is gone, fails.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	s, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Errorf("openapi: %q, want 3.1.x", v)
	}
	params := regexp.MustCompile(`\{[^}]*\}|:[a-z_]+`)
	norm := func(method, path string) string {
		return strings.ToUpper(method) + " " + params.ReplaceAllString(path, "{}")
	}
	var described []string
	paths, _ := s.doc["paths"].(map[string]any)
	for path, item := range paths {
		for method := range item.(map[string]any) {
			switch method {
			case "get", "put", "post", "delete", "patch":
				described = append(described, norm(method, path))
			}
		}
	}
	var served []string
	for _, r := range api.New(api.Options{Logger: slog.New(slog.DiscardHandler)}).Routes() {
		if r.Method == http.MethodHead {
			continue // the probes answer HEAD as well as GET
		}
		served = append(served, norm(r.Method, r.Path))
	}
	slices.Sort(described)
	slices.Sort(served)
	if diff := cmp.Diff(served, described); diff != "" {
		t.Errorf("docs/reference/openapi.yaml's paths (-served by the API +described):\n%s", diff)
	}
}

// TestOpenAPISchemasCompile compiles every request and response schema of the
// description, so a broken $ref or a schema keyword misspelt fails here rather than in
// the first test that reaches that operation.
func TestOpenAPISchemasCompile(t *testing.T) {
	t.Parallel()
	s, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	paths, _ := s.doc["paths"].(map[string]any)
	for path, item := range paths {
		for method, o := range item.(map[string]any) {
			op, ok := o.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			at := "/paths/" + pointer(path) + "/" + method
			if rb, ok := op["requestBody"].(map[string]any); ok {
				rb, rbAt := s.resolve(rb, at+"/requestBody")
				sch, ok := content(rb, rbAt, "application/json")
				if !ok {
					t.Errorf("%s %s: request body not application/json", method, path)
					continue
				}
				if _, err := s.schema(sch); err != nil {
					t.Errorf("%s %s request: %v", method, path, err)
				}
				n++
			}
			responses, _ := op["responses"].(map[string]any)
			if len(responses) == 0 {
				t.Errorf("%s %s: no responses", method, path)
			}
			for status, r := range responses {
				resp, respAt := s.resolve(r.(map[string]any), at+"/responses/"+status)
				if sch, ok := content(resp, respAt, "application/json"); ok {
					if _, err := s.schema(sch); err != nil {
						t.Errorf("%s %s %s: %v", method, path, status, err)
					}
					n++
				}
			}
		}
	}
	if n < 100 {
		t.Errorf("compiled %d schemas; the description holds more", n)
	}
}

// TestOpenAPIValidationRefuses checks that the validation the API tests run refuses an
// answer that breaks the description, a request the description does not allow, and a
// status it does not give.
func TestOpenAPIValidationRefuses(t *testing.T) {
	t.Parallel()
	s, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	const jsonType = "application/json; charset=utf-8"
	good := `{"id":"ten_1","slug":"a","name":"A","mcp_url":"https://hub.example.com/mcp/a","created_at":"2026-01-02T03:04:05Z"}`
	if err := s.validate(http.MethodGet, "/api/tenant", nil, 200, jsonType, []byte(good)); err != nil {
		t.Errorf("a tenant as described: %v", err)
	}
	for name, c := range map[string]struct {
		method, path, req string
		status            int
		typ, resp         string
	}{
		"field missing":         {http.MethodGet, "/api/tenant", "", 200, jsonType, `{"id":"ten_1","slug":"a","name":"A","created_at":"2026-01-02T03:04:05Z"}`},
		"wrong type":            {http.MethodGet, "/api/tenant", "", 200, jsonType, strings.Replace(good, `"name":"A"`, `"name":7`, 1)},
		"not a date-time":       {http.MethodGet, "/api/tenant", "", 200, jsonType, strings.Replace(good, "2026-01-02T03:04:05Z", "yesterday", 1)},
		"error without message": {http.MethodGet, "/api/tenant", "", 404, jsonType, `{"error":{"code":"not_found"}}`},
		"unknown error code":    {http.MethodGet, "/api/tenant", "", 404, jsonType, `{"error":{"code":"nope","message":"x"}}`},
		"undescribed type":      {http.MethodGet, "/api/tenant", "", 200, "text/html", `<p>hi</p>`},
		"undescribed status":    {http.MethodGet, "/healthz", "", 500, jsonType, `{"status":"ok"}`},
		"request field unknown": {http.MethodPost, "/api/keys", `{"name":"k","owner":"u"}`, 201, jsonType, `{}`},
		"request out of range":  {http.MethodPost, "/api/keys", `{"name":"k","expires_in_days":4000}`, 201, jsonType, `{}`},
		"content on 204":        {http.MethodDelete, "/api/keys/key_1", "", 200, jsonType, `{"deleted":true}`},
	} {
		if err := s.validate(c.method, c.path, []byte(c.req), c.status, c.typ, []byte(c.resp)); err == nil {
			t.Errorf("%s: %s %s answering %d %s passed", name, c.method, c.path, c.status, c.resp)
		}
	}
}
