package hubspot_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hubspot"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// testToken is the private app access token the fake upstream expects.
const testToken = "pat-na1-11a2b3c4-d5e6-47f8-9a0b-1c2d3e4f5a6b"

// tools registers Spec() in a fresh registry and returns its tools by name.
func tools(t *testing.T) map[string]*providers.Tool {
	t.Helper()
	r := providers.NewRegistry()
	if err := r.Register(hubspot.Spec()); err != nil {
		t.Fatalf("register hubspot: %v", err)
	}
	out := map[string]*providers.Tool{}
	for _, tool := range r.Tools("hubspot") {
		out[tool.Name] = tool
	}
	return out
}

// invoke runs a tool the way the router does: validate, then Invoke.
func invoke(t *testing.T, tool *providers.Tool, call *providers.Call, args string) (any, error) {
	t.Helper()
	if tool == nil {
		t.Fatal("no such tool")
	}
	if err := tool.Validate(json.RawMessage(args)); err != nil {
		return nil, err
	}
	return tool.Op.Invoke(context.Background(), call, json.RawMessage(args))
}

// newCall returns a Call for the HubSpot spec whose client talks to baseURL.
func newCall(t *testing.T, baseURL string) *providers.Call {
	t.Helper()
	spec := hubspot.Spec()
	call := providertest.NewCall(t, &spec, baseURL, testToken)
	call.Meta = map[string]string{"portal_id": testPortal, "ui_domain": "app-eu1.hubspot.com", "time_zone": "Europe/Berlin"}
	return call
}

// testPortal is the HubSpot account the connection belongs to.
const testPortal = "62515"

// answer returns a handler that answers every request with status, headers and body.
func answer(status int, header http.Header, body string) http.HandlerFunc {
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

// opCase is one operation called against a fake HubSpot that answers reply.
type opCase struct {
	name  string
	tool  string
	args  string
	reply string
	// What must have been sent.
	wantMethod string
	wantPath   string
	wantQuery  url.Values
	wantBody   map[string]any // nil: no body
	want       any
}

func (tc opCase) run(t *testing.T) {
	t.Helper()
	up := providertest.NewUpstream(t, answer(http.StatusOK, nil, tc.reply))
	tool := tools(t)[tc.tool]
	out, err := invoke(t, tool, newCall(t, up.URL), tc.args)
	if err != nil {
		t.Fatalf("%s: %v", tc.tool, err)
	}
	if diff := cmp.Diff(tc.want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	providertest.CheckOutput(t, tool, out)
	reqs := up.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream got %d requests, want 1", len(reqs))
	}
	req := reqs[0]
	if got, want := req.Header.Get("Authorization"), "Bearer "+testToken; got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
	if req.Method != tc.wantMethod || req.Path != tc.wantPath {
		t.Errorf("request = %s %s, want %s %s", req.Method, req.Path, tc.wantMethod, tc.wantPath)
	}
	wantQuery := tc.wantQuery
	if wantQuery == nil {
		wantQuery = url.Values{}
	}
	if diff := cmp.Diff(wantQuery, req.Query); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	if tc.wantBody == nil {
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
	if diff := cmp.Diff(tc.wantBody, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}
