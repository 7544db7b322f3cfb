// Package describedfake is a fake upstream made from an OpenAPI description, for tests
// of the tools built from one (providers/openapi, providers/catalog): it routes each
// request to the description's operation and checks it against the operation's method,
// path, parameters, request body and security (openapi3filter), records what it
// matched, and answers with a handler of the test's or, by default, with a body
// generated from the operation's success response schema, itself checked against that
// schema. A test fails on what the description refuses with [Fake.Check].
//
// Start from [New]; [Generate] and [Servable] are the value generator and the
// description preparation it uses.
package describedfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// Fake is a running upstream generated from a description.
type Fake struct {
	*providertest.Upstream

	mu       sync.Mutex
	problems []string // requests (or answers) the description refuses, with why
	matched  []string // the operationIds (or "METHOD path") of the requests it accepted
}

// New serves doc's operations at base path prefix (the servers' path, "/v1"); doc's
// servers, and those of its paths and operations, are replaced by the fake's own URL.
// answer, when not nil, answers every request the description accepts (it sees the
// whole body); nil answers from the operation's first success response.
func New(t testing.TB, doc *openapi3.T, prefix string, answer http.HandlerFunc) *Fake {
	t.Helper()
	f := &Fake{}
	var router routers.Router
	var once sync.Once
	var routerErr error
	f.Upstream = providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { router, routerErr = gorillamux.NewRouter(doc) })
		if routerErr != nil {
			f.problem("route the description: " + routerErr.Error())
			http.Error(w, routerErr.Error(), http.StatusInternalServerError)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		route, params, err := router.FindRoute(r)
		if err != nil {
			f.problem(r.Method + " " + r.URL.Path + ": " + err.Error())
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		opts := &openapi3filter.Options{AuthenticationFunc: CredentialPresent, MultiError: true, SkipSettingDefaults: true}
		in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
		if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
			f.problem(fmt.Sprintf("%s %s?%s %s: %v", r.Method, r.URL.Path, r.URL.RawQuery, body, err))
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		id := route.Operation.OperationID
		if id == "" {
			id = r.Method + " " + route.Path
		}
		f.mu.Lock()
		f.matched = append(f.matched, id)
		f.mu.Unlock()
		if answer != nil {
			answer(w, r)
			return
		}
		status, ct, out := Answer(route.Operation)
		if ct != "" {
			resp := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status,
				Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(bytes.NewReader(out)), Options: opts}
			if err := openapi3filter.ValidateResponse(r.Context(), resp); err != nil {
				f.problem(fmt.Sprintf("the fake's answer to %s does not match its response schema: %v", id, err))
			}
			w.Header().Set("Content-Type", ct)
		}
		w.WriteHeader(status)
		_, _ = w.Write(out)
	})
	doc.Servers = openapi3.Servers{{URL: f.URL + prefix}}
	for _, item := range doc.Paths.Map() { // the tools use the description's first server
		item.Servers = nil
		for _, op := range item.Operations() {
			op.Servers = nil
		}
	}
	return f
}

func (f *Fake) problem(p string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.problems = append(f.problems, p)
}

// Matched returns the operationIds (or "METHOD path") of the requests the description
// accepted so far, in order.
func (f *Fake) Matched() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.matched...)
}

// Problems returns what the description refused so far: requests, and generated
// answers its response schema refused, each with why.
func (f *Fake) Problems() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.problems...)
}

// Check fails t for every problem.
func (f *Fake) Check(t testing.TB) {
	t.Helper()
	for _, p := range f.Problems() {
		t.Errorf("the description refuses: %s", p)
	}
}

// Answer is an operation's first 2xx response: its status, content type and a body
// generated from its schema (JSON), or no body when it declares none.
func Answer(op *openapi3.Operation) (int, string, []byte) {
	codes := make([]string, 0)
	for code := range op.Responses.Map() {
		if strings.HasPrefix(code, "2") {
			codes = append(codes, code)
		}
	}
	sort.Strings(codes)
	for _, code := range codes {
		status := 200
		_, _ = fmt.Sscan(strings.ReplaceAll(code, "X", "0"), &status)
		ref := op.Responses.Value(code)
		if ref == nil || ref.Value == nil || len(ref.Value.Content) == 0 {
			return status, "", nil
		}
		for _, ct := range []string{"application/json", "application/json; charset=utf-8"} {
			if mt := ref.Value.Content.Get(ct); mt != nil {
				raw, _ := json.Marshal(Generate(mt.Schema, false))
				return status, "application/json", raw
			}
		}
		keys := make([]string, 0, len(ref.Value.Content))
		for k := range ref.Value.Content {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		mt := ref.Value.Content[keys[0]]
		if strings.Contains(keys[0], "json") {
			raw, _ := json.Marshal(Generate(mt.Schema, false))
			return status, keys[0], raw
		}
		return status, keys[0], []byte("x")
	}
	return http.StatusOK, "application/json", []byte("{}")
}

// Servable is a description as a fake serves it: without the servers of its paths and
// operations (the tools would call those instead of the fake), and without the
// patterns Go's regular expressions cannot compile (lookaheads, \Z), which the fake's
// validator would refuse every value for.
func Servable(t testing.TB, data []byte) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if paths, ok := doc["paths"].(map[string]any); ok {
		for _, item := range paths {
			if m, ok := item.(map[string]any); ok {
				delete(m, "servers")
				for _, op := range m {
					if o, ok := op.(map[string]any); ok {
						delete(o, "servers")
					}
				}
			}
		}
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if p, ok := v["pattern"].(string); ok {
				if _, err := regexp.Compile(p); err != nil {
					delete(v, "pattern")
				}
			}
			for _, x := range v {
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// CredentialPresent accepts a request that carries the credential a security scheme
// asks for, where the scheme says.
func CredentialPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s, r := in.SecurityScheme, in.RequestValidationInput.Request
	present := true
	switch s.Type {
	case "apiKey":
		switch s.In {
		case "header":
			present = r.Header.Get(s.Name) != ""
		case "query":
			present = r.URL.Query().Get(s.Name) != ""
		case "cookie":
			_, err := r.Cookie(s.Name)
			present = err == nil
		}
	case "http":
		if strings.EqualFold(s.Scheme, "basic") {
			_, _, present = r.BasicAuth()
		} else {
			present = strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), strings.ToLower(s.Scheme)+" ")
		}
	case "oauth2", "openIdConnect":
		present = strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	if !present {
		return fmt.Errorf("no %s credential (%s %s)", s.Type, s.In, s.Name)
	}
	return nil
}
