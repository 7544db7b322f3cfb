package jira_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/jira"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// The connection the tests act for: its OAuth token, and the site Verify recorded.
const (
	testToken = "eyJraWQiOiJhdXRoLmF0bGFzc2lhbi5jb20tQUNDRVNTLTk0ZTczYTkwIn0.test-access-token"
	cloudID   = "1324a887-45db-1bf4-1e99-ef0ff456d421"
	siteURL   = "https://acme.atlassian.net"
	apiBase   = "/ex/jira/" + cloudID + "/rest/api/3"
)

// tools registers Spec() in a fresh registry and returns its tools by name.
func tools(t *testing.T) map[string]*providers.Tool {
	t.Helper()
	r := providers.NewRegistry()
	if err := r.Register(jira.Spec()); err != nil {
		t.Fatalf("register jira: %v", err)
	}
	out := map[string]*providers.Tool{}
	for _, tool := range r.Tools("jira") {
		out[tool.Name] = tool
	}
	return out
}

// newCall returns a Call for a Jira connection whose client talks to baseURL, with the
// meta Verify records.
func newCall(t *testing.T, baseURL string) *providers.Call {
	t.Helper()
	spec := jira.Spec()
	c := providertest.NewCall(t, &spec, baseURL, testToken)
	c.Meta = map[string]string{"cloud_id": cloudID, "site_url": siteURL}
	return c
}

// invoke runs a tool the way the router does: validate, then Invoke; a success is
// checked against the tool's output schema.
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

// answer returns a handler that answers every request with status, headers and body.
func answer(status int, header http.Header, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range header {
			w.Header()[k] = vs
		}
		if body != "" && w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// opCase is one operation called against a fake Jira.
type opCase struct {
	name   string
	tool   string
	args   string
	status int // 200 when 0
	answer string
	// What must have been sent.
	wantMethod string
	wantPath   string // after /ex/jira/{cloud_id}/rest/api/3
	wantQuery  url.Values
	wantBody   map[string]any // nil: no body
	want       any
}

func (tc opCase) run(t *testing.T) {
	t.Helper()
	status := tc.status
	if status == 0 {
		status = http.StatusOK
	}
	up := providertest.NewUpstream(t, answer(status, nil, tc.answer))
	out, err := invoke(t, tc.tool, newCall(t, up.URL), tc.args)
	if err != nil {
		t.Fatalf("%s: %v", tc.tool, err)
	}
	if diff := cmp.Diff(tc.want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	reqs := up.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream got %d requests, want 1", len(reqs))
	}
	req := reqs[0]
	if got := req.Header.Get("Authorization"); got != "Bearer "+testToken {
		t.Errorf("Authorization = %q, want Bearer and the token", got)
	}
	if req.Method != tc.wantMethod || req.Path != apiBase+tc.wantPath {
		t.Errorf("request = %s %s, want %s %s", req.Method, req.Path, tc.wantMethod, apiBase+tc.wantPath)
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
		t.Fatalf("request body %q: %v", req.Body, err)
	}
	if diff := cmp.Diff(tc.wantBody, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// adf is the ADF document Jira takes for paragraphs of plain text, as decoded JSON.
func adf(paragraphs ...string) map[string]any {
	content := []any{}
	for _, p := range paragraphs {
		content = append(content, map[string]any{"type": "paragraph", "content": []any{map[string]any{"type": "text", "text": p}}})
	}
	return map[string]any{"type": "doc", "version": float64(1), "content": content}
}

// issueFields is the field list every issue query asks for.
var issueFields = []any{"summary", "status", "issuetype", "priority", "assignee", "reporter", "project", "labels", "created", "updated", "duedate", "parent"}
