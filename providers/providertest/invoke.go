package providertest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
)

// Tools registers spec in a fresh registry and returns its tools by name.
func Tools(t testing.TB, spec providers.Spec) map[string]*providers.Tool {
	t.Helper()
	r := providers.NewRegistry()
	if err := r.Register(spec); err != nil {
		t.Fatalf("register %s: %v", spec.Name, err)
	}
	out := map[string]*providers.Tool{}
	for _, tool := range r.Tools(spec.Name) {
		out[tool.Name] = tool
	}
	return out
}

// Invoke runs a tool the way the router does: validate the arguments, then Invoke.
func Invoke(t testing.TB, tool *providers.Tool, call *providers.Call, args string) (any, error) {
	t.Helper()
	if tool == nil {
		t.Fatal("no such tool")
	}
	if err := tool.Validate(json.RawMessage(args)); err != nil {
		return nil, err
	}
	return tool.Op.Invoke(context.Background(), call, json.RawMessage(args))
}

// Answer returns a handler that answers every request with status, headers and body;
// a body without a Content-Type header is sent as JSON.
func Answer(status int, header http.Header, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range header {
			w.Header()[k] = vs
		}
		if body != "" && w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// WantJSONRequest is what a JSON API request must have been: method, path, query (nil
// for none), JSON object body (nil for no body) and bearer token.
type WantJSONRequest struct {
	Method string
	Path   string
	Query  url.Values
	Body   map[string]any
	Token  string
}

// CheckJSONRequest fails t for every way req differs from want.
func CheckJSONRequest(t testing.TB, req Request, want WantJSONRequest) {
	t.Helper()
	if got, w := req.Header.Get("Authorization"), "Bearer "+want.Token; got != w {
		t.Errorf("Authorization = %q, want %q", got, w)
	}
	if req.Method != want.Method || req.Path != want.Path {
		t.Errorf("request = %s %s, want %s %s", req.Method, req.Path, want.Method, want.Path)
	}
	wantQuery := want.Query
	if wantQuery == nil {
		wantQuery = url.Values{}
	}
	if diff := cmp.Diff(wantQuery, req.Query); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	if want.Body == nil {
		if len(req.Body) != 0 {
			t.Errorf("request body = %s, want none", req.Body)
		}
		return
	}
	if req.ContentType != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", req.ContentType)
	}
	var got map[string]any
	if err := json.Unmarshal(req.Body, &got); err != nil {
		t.Fatalf("request body %q is not a JSON object: %v", req.Body, err)
	}
	if diff := cmp.Diff(want.Body, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}
