package providertest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func jsonRequest(method, path, body string) Request {
	h := http.Header{"Authorization": {"Bearer ghp_test"}, "Accept": {"application/vnd.github+json"}}
	r := Request{Method: method, Path: path, Query: url.Values{}, Header: h}
	if body != "" {
		h.Set("Content-Type", "application/json")
		r.ContentType = "application/json"
		r.Body = []byte(body)
	}
	return r
}

func withQuery(r Request, q url.Values) Request {
	r.Query = q
	return r
}

func TestGitHubCheckRequest(t *testing.T) {
	t.Parallel()
	d := GitHubDescription(t)
	t.Logf("GitHub description: %d operations, loaded in %v", len(d.byID), d.load)
	tests := []struct {
		name   string
		req    Request
		wantID string
		// wantErrs are substrings the failures must hold; none means the check passes.
		wantErrs []string
	}{
		{
			name:   "list issues with state=open",
			req:    withQuery(jsonRequest("GET", "/repos/octo/hello/issues", ""), url.Values{"state": {"open"}, "per_page": {"50"}}),
			wantID: "issues/list-for-repo",
		},
		{
			name:   "get one issue",
			req:    jsonRequest("GET", "/repos/octo/hello/issues/42", ""),
			wantID: "issues/get",
		},
		{
			name:   "create an issue",
			req:    jsonRequest("POST", "/repos/octo/hello/issues", `{"title":"Bug","body":"It broke","labels":["bug"]}`),
			wantID: "issues/create",
		},
		{
			name:   "file path with slashes (x-multi-segment)",
			req:    withQuery(jsonRequest("GET", "/repos/octo/hello/contents/docs/guide/intro.md", ""), url.Values{"ref": {"main"}}),
			wantID: "repos/get-content",
		},
		{
			name:   "branch with a slash in the middle of the path",
			req:    jsonRequest("GET", "/repos/octo/hello/branches/feature/x/protection", ""),
			wantID: "repos/get-branch-protection",
		},
		{
			name:     "slashes where the parameter allows none",
			req:      jsonRequest("GET", "/repos/octo/hello/issues/42/extra", ""),
			wantErrs: []string{"matches no operation"},
		},
		{
			name:     "unknown path",
			req:      jsonRequest("GET", "/repos/octo/hello/nonsense/1/2", ""),
			wantErrs: []string{"matches no operation"},
		},
		{
			name:     "method the path does not have",
			req:      jsonRequest("DELETE", "/repos/octo/hello/issues", ""),
			wantErrs: []string{"not with method DELETE"},
		},
		{
			name:     "bad enum value",
			req:      withQuery(jsonRequest("GET", "/repos/octo/hello/issues", ""), url.Values{"state": {"bogus"}}),
			wantID:   "issues/list-for-repo",
			wantErrs: []string{`issues/list-for-repo`, `query parameter "state"`, "allowed values"},
		},
		{
			name:     "wrong parameter type",
			req:      withQuery(jsonRequest("GET", "/repos/octo/hello/issues", ""), url.Values{"per_page": {"many"}}),
			wantID:   "issues/list-for-repo",
			wantErrs: []string{`query parameter "per_page"`},
		},
		{
			name:     "undeclared query parameter",
			req:      withQuery(jsonRequest("GET", "/repos/octo/hello/issues", ""), url.Values{"perpage": {"50"}}),
			wantID:   "issues/list-for-repo",
			wantErrs: []string{`query parameter "perpage" is not a parameter`},
		},
		{
			name:     "body missing a required field",
			req:      jsonRequest("POST", "/repos/octo/hello/issues", `{"body":"no title"}`),
			wantID:   "issues/create",
			wantErrs: []string{"issues/create", "body", `"title"`},
		},
		{
			name:     "misspelt body field",
			req:      jsonRequest("POST", "/repos/octo/hello/issues", `{"title":"Bug","lables":["bug"]}`),
			wantID:   "issues/create",
			wantErrs: []string{`body field "lables" is not in the request body schema`},
		},
		{
			name:     "no body where one is required",
			req:      jsonRequest("POST", "/repos/octo/hello/issues", ""),
			wantID:   "issues/create",
			wantErrs: []string{"issues/create", "body"},
		},
		{
			name:     "path parameter of the wrong type",
			req:      jsonRequest("GET", "/repos/octo/hello/issues/abc", ""),
			wantID:   "issues/get",
			wantErrs: []string{`path parameter "issue_number"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var id string
			rec := record(t, func(tb testing.TB) { id = d.CheckRequest(tb, tt.req) })
			if id != tt.wantID {
				t.Errorf("CheckRequest() = %q, want %q", id, tt.wantID)
			}
			assertFailures(t, rec, tt.wantErrs)
		})
	}
}

// assertFailures checks that rec failed with every one of want, or did not fail when
// want is empty.
func assertFailures(t *testing.T, rec *recorder, want []string) {
	t.Helper()
	got := rec.joined()
	if len(want) == 0 {
		if got != "" {
			t.Errorf("check failed, want it to pass:\n%s", got)
		}
		return
	}
	if got == "" {
		t.Errorf("check passed, want it to fail with %q", want)
		return
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("failure does not mention %q:\n%s", w, got)
		}
	}
}

func TestGitHubCheckResponse(t *testing.T) {
	t.Parallel()
	d := GitHubDescription(t)
	tests := []struct {
		name     string
		op       string
		status   int
		body     string
		wantErrs []string
	}{
		{
			name:   "issue list",
			op:     "issues/list-for-repo",
			status: 200,
			body:   `[` + issueJSON + `]`,
		},
		{
			name:   "not found",
			op:     "issues/get",
			status: 404,
			body:   `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`,
		},
		{
			name:     "issue without its required fields",
			op:       "issues/get",
			status:   200,
			body:     `{"id":1,"title":"Bug"}`,
			wantErrs: []string{"issues/get", "response 200", `"number"`},
		},
		{
			name:     "wrong type",
			op:       "issues/list-for-repo",
			status:   200,
			body:     `{"items":[]}`,
			wantErrs: []string{"array"},
		},
		{
			name:     "undeclared status",
			op:       "issues/get",
			status:   418,
			wantErrs: []string{"status 418 is not a response", "200"},
		},
		{
			name:     "unknown operation",
			op:       "issues/teleport",
			status:   200,
			body:     `{}`,
			wantErrs: []string{`no operation "issues/teleport"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := record(t, func(tb testing.TB) { d.CheckResponse(tb, tt.op, tt.status, []byte(tt.body)) })
			assertFailures(t, rec, tt.wantErrs)
		})
	}
}

// issueJSON is an issue as GitHub returns it, trimmed to the required fields.
const issueJSON = `{
  "id": 1, "node_id": "I_1", "number": 42, "title": "Bug", "state": "open", "locked": false,
  "url": "https://api.github.com/repos/octo/hello/issues/42",
  "repository_url": "https://api.github.com/repos/octo/hello",
  "labels_url": "https://api.github.com/repos/octo/hello/issues/42/labels{/name}",
  "comments_url": "https://api.github.com/repos/octo/hello/issues/42/comments",
  "events_url": "https://api.github.com/repos/octo/hello/issues/42/events",
  "html_url": "https://github.com/octo/hello/issues/42",
  "user": null, "labels": [], "assignee": null, "milestone": null, "comments": 0,
  "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z", "closed_at": null,
  "author_association": "OWNER"
}`
