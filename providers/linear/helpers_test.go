package linear_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/linear"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// Credentials the fake upstream expects: a personal API key goes bare, an OAuth token
// as Bearer.
const (
	testKey   = "lin_api_0123456789abcdefghijklmnopqrstuvwxyzABCD"
	testOAuth = "lin_oauth_9f8e7d6c5b4a39281706f5e4d3c2b1a0"
)

// schema is the part of Linear's schema the provider uses (testdata/schema.graphql).
var schema = sync.OnceValues(func() (*ast.Schema, error) {
	b, err := os.ReadFile(filepath.Join("testdata", "schema.graphql"))
	if err != nil {
		return nil, err
	}
	return gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: string(b)})
})

// gqlBody is a GraphQL request as the fake decodes it.
type gqlBody struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
}

// reply is what the fake answers to one operation.
type reply struct {
	status int // 200 when 0
	header http.Header
	body   string
}

// fakeLinear answers like Linear's GraphQL endpoint: it checks that each request is a
// POST of JSON with a document that is valid against the schema, whose variables match
// the operation's variable types, and answers by operation name. An operation with no
// reply fails the test.
func fakeLinear(t *testing.T, replies map[string]reply) *providertest.Upstream {
	t.Helper()
	s, err := schema()
	if err != nil {
		t.Fatalf("load schema: %v", err)
	}
	return providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		var body gqlBody
		if r.Method != http.MethodPost || r.URL.Path != "/graphql" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %s %s (%s), want POST /graphql with JSON", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("request body is not JSON: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		doc, gerrs := gqlparser.LoadQuery(s, body.Query)
		if len(gerrs) > 0 {
			t.Errorf("operation %s is not valid against the schema: %v\n%s", body.OperationName, gerrs, body.Query)
		} else if op := doc.Operations.ForName(body.OperationName); op == nil {
			t.Errorf("document has no operation %q", body.OperationName)
		} else if _, err := validator.VariableValues(s, op, body.Variables); err != nil {
			t.Errorf("operation %s: variables %v do not match: %v", body.OperationName, body.Variables, err)
		}
		rep, ok := replies[body.OperationName]
		if !ok {
			t.Errorf("unexpected operation %s", body.OperationName)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		for k, v := range rep.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		status := rep.status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(rep.body))
	})
}

// sent decodes the GraphQL requests the fake received.
func sent(t *testing.T, up *providertest.Upstream) []gqlBody {
	t.Helper()
	var out []gqlBody
	for _, req := range up.Requests() {
		var b gqlBody
		if err := json.Unmarshal(req.Body, &b); err != nil {
			t.Fatalf("request body %q: %v", req.Body, err)
		}
		out = append(out, b)
	}
	return out
}

// tools registers Spec() in a fresh registry and returns its tools by name.
func tools(t *testing.T) map[string]*providers.Tool {
	t.Helper()
	r := providers.NewRegistry()
	if err := r.Register(linear.Spec()); err != nil {
		t.Fatalf("register linear: %v", err)
	}
	out := map[string]*providers.Tool{}
	for _, tool := range r.Tools("linear") {
		out[tool.Name] = tool
	}
	return out
}

// newCall returns a Call for the Linear spec whose client talks to the fake's
// /graphql with token.
func newCall(t *testing.T, up *providertest.Upstream, token string) *providers.Call {
	t.Helper()
	spec := linear.Spec()
	return providertest.NewCall(t, &spec, up.URL+"/graphql", token)
}

// invoke runs a tool the way the router does: validate, then Invoke.
func invoke(t *testing.T, name string, call *providers.Call, args string) (any, error) {
	t.Helper()
	tool := tools(t)[name]
	if tool == nil {
		t.Fatalf("no tool %s", name)
	}
	if err := tool.Validate(json.RawMessage(args)); err != nil {
		return nil, err
	}
	out, err := tool.Op.Invoke(context.Background(), call, json.RawMessage(args))
	if err == nil {
		providertest.CheckOutput(t, tool, out)
	}
	return out, err
}

// call is one expected GraphQL request: its operation and variables.
type call struct {
	Operation string
	Variables map[string]any
}

// checkSent compares the operations and variables sent with want.
func checkSent(t *testing.T, up *providertest.Upstream, want ...call) {
	t.Helper()
	var got []call
	for _, b := range sent(t, up) {
		got = append(got, call{Operation: b.OperationName, Variables: b.Variables})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }
