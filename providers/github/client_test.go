package github_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/github"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// Arguments of the operations the failure table calls.
const (
	getIssueArgs    = `{"owner": "octocat", "repo": "Hello-World", "issue_number": 1347}`
	getPullArgs     = `{"owner": "octocat", "repo": "Hello-World", "pull_number": 1347}`
	createIssueArgs = `{"owner": "octocat", "repo": "Hello-World", "title": "Found a bug"}`
	createPullArgs  = `{"owner": "octocat", "repo": "Hello-World", "title": "Amazing new feature", "head": "new-topic", "base": "master"}`
)

// TestFailures maps GitHub's failures, answered the way GitHub answers them, to codes
// an agent can act on, and checks that reads are retried and creations sent once.
func TestFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tool   string
		args   string
		status int
		header http.Header
		// resetIn, when set, adds X-RateLimit-Reset that far in the future, taken
		// when the case runs.
		resetIn time.Duration
		body    string
		// undocumented says why the answer is not checked against the operation's
		// responses in GitHub's description ("" when it is): GitHub answers some
		// statuses on any endpoint without listing them per operation.
		undocumented   string
		wantCode       switchboard.Code
		wantField      string
		wantIn         string        // a part of the error message
		wantRetryAfter time.Duration // 0: none; else the wait, less at most 5 s of test time
		wantAttempts   int
	}{
		{
			name: "401 bad credentials", tool: "github_get_issue", args: getIssueArgs, status: http.StatusUnauthorized,
			body:         `{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"}`,
			undocumented: "GitHub answers 401 on every endpoint for a bad token",
			wantCode:     switchboard.CodeReconnect, wantIn: "reconnect", wantAttempts: 1,
		},
		{
			name: "403 missing permission", tool: "github_create_issue", args: createIssueArgs, status: http.StatusForbidden,
			header:   http.Header{"X-Oauth-Scopes": {"read:org"}, "X-Accepted-Oauth-Scopes": {"repo"}, "X-Ratelimit-Remaining": {"4990"}},
			body:     `{"message": "Resource not accessible by personal access token", "documentation_url": "https://docs.github.com/rest/issues/issues#create-an-issue", "status": "403"}`,
			wantCode: switchboard.CodeForbidden, wantIn: `Resource not accessible by personal access token; the token lacks the permission or scope this needs (token scopes: "read:org"; GitHub accepts: "repo")`,
			wantAttempts: 1,
		},
		{
			name: "403 primary rate limit spent", tool: "github_get_pull_request", args: getPullArgs, status: http.StatusForbidden,
			header:       http.Header{"X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Used": {"5000"}, "X-Ratelimit-Resource": {"core"}},
			resetIn:      2 * time.Minute,
			body:         `{"message": "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID.", "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api", "status": "403"}`,
			undocumented: "pulls/get lists no 403; GitHub answers it on every endpoint when the rate limit is spent",
			wantCode:     switchboard.CodeRateLimited, wantIn: "API rate limit exceeded", wantRetryAfter: 2 * time.Minute, wantAttempts: 1,
		},
		{
			name: "403 secondary rate limit with Retry-After", tool: "github_create_issue", args: createIssueArgs, status: http.StatusForbidden,
			header:   http.Header{"Retry-After": {"60"}, "X-Ratelimit-Remaining": {"4000"}},
			body:     `{"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.", "documentation_url": "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits", "status": "403"}`,
			wantCode: switchboard.CodeRateLimited, wantIn: "secondary rate limit", wantRetryAfter: time.Minute, wantAttempts: 1,
		},
		{
			name: "403 secondary rate limit without Retry-After waits a minute", tool: "github_create_issue", args: createIssueArgs, status: http.StatusForbidden,
			body:     `{"message": "You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later.", "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits", "status": "403"}`,
			wantCode: switchboard.CodeRateLimited, wantIn: "secondary rate limit", wantRetryAfter: time.Minute, wantAttempts: 1,
		},
		{
			name: "404 repository not visible", tool: "github_get_issue", args: getIssueArgs, status: http.StatusNotFound,
			body:     `{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/issues/issues#get-an-issue", "status": "404"}`,
			wantCode: switchboard.CodeNotFound, wantIn: "private repository the token cannot see", wantAttempts: 1,
		},
		{
			name: "409 conflict", tool: "github_get_issue", args: getIssueArgs, status: http.StatusConflict,
			body:         `{"message": "Git Repository is empty.", "documentation_url": "https://docs.github.com/rest", "status": "409"}`,
			undocumented: "issues/get lists no 409; GitHub answers it for repositories in a conflicting state (empty, being migrated)",
			wantCode:     switchboard.CodeConflict, wantIn: "Git Repository is empty.", wantAttempts: 1,
		},
		{
			name: "422 missing field names the field", tool: "github_create_issue", args: createIssueArgs, status: http.StatusUnprocessableEntity,
			body:     `{"message": "Validation Failed", "errors": [{"resource": "Issue", "code": "missing_field", "field": "title"}], "documentation_url": "https://docs.github.com/rest/issues/issues#create-an-issue", "status": "422"}`,
			wantCode: switchboard.CodeInvalid, wantField: "title", wantIn: "Validation Failed: title missing_field", wantAttempts: 1,
		},
		{
			name: "422 custom message without a field", tool: "github_create_pull_request", args: createPullArgs, status: http.StatusUnprocessableEntity,
			body:     `{"message": "Validation Failed", "errors": [{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for octocat:new-topic."}], "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request", "status": "422"}`,
			wantCode: switchboard.CodeInvalid, wantIn: "PullRequest: A pull request already exists for octocat:new-topic.", wantAttempts: 1,
		},
		{
			name: "405 pull request not mergeable", tool: "github_merge_pull_request", args: getPullArgs, status: http.StatusMethodNotAllowed,
			body:     `{"message": "Pull Request is not mergeable", "documentation_url": "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request", "status": "405"}`,
			wantCode: switchboard.CodeInvalid, wantIn: "Pull Request is not mergeable", wantAttempts: 1,
		},
		{
			name: "409 head moved before the merge", tool: "github_merge_pull_request", args: getPullArgs, status: http.StatusConflict,
			body:     `{"message": "Head branch was modified. Review and try the merge again.", "documentation_url": "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request", "status": "409"}`,
			wantCode: switchboard.CodeConflict, wantIn: "Head branch was modified", wantAttempts: 1,
		},
		{
			name: "409 stale file sha", tool: "github_create_or_update_file", status: http.StatusConflict,
			args: `{"owner": "octocat", "repo": "Hello-World", "path": "README.md", "content": "x", "message": "m", "sha": "95b966ae1c166bd92f8ae7d1c313e738c731dfc3"}`,
			body: `{"message": "README.md does not match 95b966ae1c166bd92f8ae7d1c313e738c731dfc3", "documentation_url": "https://docs.github.com/rest/repos/contents#create-or-update-file-contents", "status": "409"}`,
			undocumented: "the description's 409 is a oneOf of basic-error and repository-rule-violation-error, both of which " +
				"any basic error matches, so no body can validate against it",
			wantCode: switchboard.CodeConflict, wantIn: "does not match", wantAttempts: 1,
		},
		{
			name: "429 with Retry-After on a read", tool: "github_get_pull_request", args: getPullArgs, status: http.StatusTooManyRequests,
			header:       http.Header{"Retry-After": {"30"}},
			body:         `{"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits", "status": "429"}`,
			undocumented: "GitHub lists 429 in its rate-limit documentation, not per operation",
			// The retrier would send the read again, but the client kit's limiter holds the
			// 30 s window and refuses at once, so only one request reaches GitHub.
			wantCode: switchboard.CodeRateLimited, wantRetryAfter: 30 * time.Second, wantAttempts: 1,
		},
		{
			name: "500 on a read is retried", tool: "github_get_pull_request", args: getPullArgs, status: http.StatusInternalServerError,
			body:     `{"message": "Server Error", "documentation_url": "https://docs.github.com/rest", "status": "500"}`,
			wantCode: switchboard.CodeUpstream, wantIn: "Server Error", wantAttempts: 3,
		},
		{
			name: "503 on a read is retried", tool: "github_get_pull_request", args: getPullArgs, status: http.StatusServiceUnavailable,
			body:     `{"code": "unavailable", "message": "Service Unavailable", "documentation_url": "https://docs.github.com/rest"}`,
			wantCode: switchboard.CodeUpstream, wantIn: "Service Unavailable", wantAttempts: 3,
		},
		{
			name: "502 on a read without a JSON body is retried", tool: "github_get_issue", args: getIssueArgs, status: http.StatusBadGateway,
			body:         `<html><body><h1>502 Bad Gateway</h1></body></html>`,
			undocumented: "GitHub's front end answers 502 with an HTML page on any endpoint",
			wantCode:     switchboard.CodeUpstream, wantIn: "github answered 502: Bad Gateway", wantAttempts: 3,
		},
		{
			name: "503 on create_issue is sent once", tool: "github_create_issue", args: createIssueArgs, status: http.StatusServiceUnavailable,
			body:     `{"code": "unavailable", "message": "Service Unavailable", "documentation_url": "https://docs.github.com/rest"}`,
			wantCode: switchboard.CodeUpstream, wantIn: "Service Unavailable", wantAttempts: 1,
		},
		{
			name: "502 on create_issue is sent once", tool: "github_create_issue", args: createIssueArgs, status: http.StatusBadGateway,
			body:         `{"message": "Server Error", "documentation_url": "https://docs.github.com/rest"}`,
			undocumented: "GitHub answers 502 on any endpoint when a backend times out",
			wantCode:     switchboard.CodeUpstream, wantIn: "Server Error", wantAttempts: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			header := tc.header.Clone()
			if header == nil {
				header = http.Header{}
			}
			if tc.resetIn > 0 {
				header.Set("X-Ratelimit-Reset", strconv.FormatInt(time.Now().Add(tc.resetIn).Unix(), 10))
			}
			up := providertest.NewUpstream(t, answer(tc.status, header, []byte(tc.body)))
			_, err := invoke(t, tools(t)[tc.tool], newCall(t, up.URL), tc.args)
			if err == nil {
				t.Fatal("no error")
			}
			if code := switchboard.CodeOf(err); code != tc.wantCode {
				t.Errorf("code = %q, want %q (error: %v)", code, tc.wantCode, err)
			}
			var ue *providers.UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v carries no *providers.UpstreamError", err)
			}
			if ue.Provider != "github" || ue.Status != tc.status {
				t.Errorf("upstream error = %s %d, want github %d", ue.Provider, ue.Status, tc.status)
			}
			if tc.wantRetryAfter == 0 && ue.RetryAfter != 0 {
				t.Errorf("retry after = %v, want none", ue.RetryAfter)
			}
			if tc.wantRetryAfter != 0 && (ue.RetryAfter > tc.wantRetryAfter || ue.RetryAfter < tc.wantRetryAfter-5*time.Second) {
				t.Errorf("retry after = %v, want about %v", ue.RetryAfter, tc.wantRetryAfter)
			}
			if !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("error %q does not say %q", err, tc.wantIn)
			}
			var se *switchboard.Error
			if field := ""; errors.As(err, &se) {
				field = se.Field
				if field != tc.wantField {
					t.Errorf("field = %q, want %q", field, tc.wantField)
				}
			} else if tc.wantField != "" {
				t.Errorf("error %v names no field, want %q", err, tc.wantField)
			}
			if strings.Contains(err.Error(), "<html>") {
				t.Errorf("error %q carries the HTML page", err)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error %q shows the token", err)
			}
			if n := len(up.Requests()); n != tc.wantAttempts {
				t.Errorf("upstream got %d requests, want %d", n, tc.wantAttempts)
			}
			ids := checkRequests(t, up, "")
			if tc.undocumented == "" {
				providertest.GitHubDescription(t).CheckResponse(t, ids[0], tc.status, []byte(tc.body))
			}
		})
	}
}

// TestPagination follows next_cursor across two pages: the second request carries
// page=2 and the first page's per_page even when the caller asks for another limit
// (GitHub's pages are numbered in units of per_page, so a new size would skip or
// repeat items), and the last page has no next_cursor.
func TestPagination(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		tool    string
		path    string
		args    string // without cursor; "}" is appended
		fixture string
		count   func(any) int
	}{
		{name: "issues", tool: "github_list_issues", path: "/repos/octocat/Hello-World/issues", fixture: "issues.json",
			args:  `{"owner": "octocat", "repo": "Hello-World", "state": "all", "limit": 2`,
			count: func(o any) int { return len(o.(github.ListIssuesOutput).Issues) }},
		{name: "pull requests", tool: "github_list_pull_requests", path: "/repos/octocat/Hello-World/pulls", fixture: "pulls.json",
			args:  `{"owner": "octocat", "repo": "Hello-World", "state": "all", "limit": 2`,
			count: func(o any) int { return len(o.(github.ListPullRequestsOutput).PullRequests) }},
		{name: "search", tool: "github_search_repositories", path: "/search/repositories", fixture: "search_repositories.json",
			args:  `{"q": "tetris", "limit": 2`,
			count: func(o any) int { return len(o.(github.SearchRepositoriesOutput).Items) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := fixture(t, tc.fixture)
			var base string
			up := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				q := r.URL.Query()
				link := func(page, rel string) string {
					q.Set("page", page)
					return "<" + base + r.URL.Path + "?" + q.Encode() + `>; rel="` + rel + `"`
				}
				if r.URL.Query().Get("page") == "" {
					w.Header().Set("Link", link("2", "next")+", "+link("2", "last"))
				} else {
					w.Header().Set("Link", link("1", "prev")+", "+link("1", "first"))
				}
				answer(http.StatusOK, nil, body)(w, r)
			})
			base = up.URL
			tool := tools(t)[tc.tool]
			call := newCall(t, up.URL)
			first, err := invoke(t, tool, call, tc.args+"}")
			if err != nil {
				t.Fatalf("first page: %v", err)
			}
			cursor := nextOf(first)
			if cursor == "" {
				t.Fatal("first page has no next_cursor")
			}
			secondArgs := strings.Replace(tc.args, `"limit": 2`, `"limit": 7`, 1)
			second, err := invoke(t, tool, call, secondArgs+`, "cursor": "`+cursor+`"}`)
			if err != nil {
				t.Fatalf("second page: %v", err)
			}
			if next := nextOf(second); next != "" {
				t.Errorf("last page next_cursor = %q, want none", next)
			}
			if tc.count(first) == 0 || tc.count(second) == 0 {
				t.Errorf("pages hold %d and %d items, want some", tc.count(first), tc.count(second))
			}
			providertest.CheckListedOutput(t, tool, first)
			providertest.CheckListedOutput(t, tool, second)
			reqs := up.Requests()
			if len(reqs) != 2 {
				t.Fatalf("upstream got %d requests, want 2", len(reqs))
			}
			var pages [][2]string
			for _, r := range reqs {
				if r.Path != tc.path {
					t.Errorf("path = %s, want %s", r.Path, tc.path)
				}
				pages = append(pages, [2]string{r.Query.Get("page"), r.Query.Get("per_page")})
			}
			if diff := cmp.Diff([][2]string{{"", "2"}, {"2", "2"}}, pages); diff != "" {
				t.Errorf("(page, per_page) of the requests (-want +got):\n%s", diff)
			}
			checkRequests(t, up, "")
		})
	}
}

// nextOf returns a list output's next_cursor.
func nextOf(out any) string {
	switch o := out.(type) {
	case github.ListIssuesOutput:
		return o.NextCursor
	case github.ListPullRequestsOutput:
		return o.NextCursor
	case github.SearchRepositoriesOutput:
		return o.NextCursor
	}
	return ""
}

// TestEnterpriseServerBaseURL points the provider at a base URL with a path prefix, as
// GitHub Enterprise Server's https://HOST/api/v3, and checks that every request keeps
// the prefix and is, below it, a request of GitHub's description.
// TestEveryOperationOnEnterpriseServer runs every operation's cases against a GitHub
// Enterprise Server base URL (https://HOST/api/v3): every request keeps the /api/v3
// prefix and is otherwise the request sent to github.com.
func TestEveryOperationOnEnterpriseServer(t *testing.T) {
	t.Parallel()
	for _, tc := range specCheckedCases() {
		t.Run(tc.tool+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			tc.runAt(t, "/api/v3")
		})
	}
}

func TestEnterpriseServerBaseURL(t *testing.T) {
	t.Parallel()
	const prefix = "/api/v3"
	files := map[string]string{
		"/api/v3/user":                "user.json",
		"/api/v3/search/repositories": "search_repositories.json",
		"/api/v3/repos/octocat/Hello-World/contents/docs/README.md": "file.json",
		"/api/v3/repos/octocat/Hello-World/issues":                  "issue.json",
		"/api/v3/repos/octocat/Hello-World/issues/1347":             "issue.json",
		"/api/v3/repos/octocat/Hello-World/pulls/1347":              "pull.json",
	}
	up := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		name, ok := files[r.URL.Path]
		if !ok {
			answer(http.StatusNotFound, nil, []byte(`{"message": "Not Found", "documentation_url": "https://docs.github.com/enterprise-server@3.14/rest", "status": "404"}`))(w, r)
			return
		}
		status := http.StatusOK
		if r.Method == http.MethodPost {
			status = http.StatusCreated
		}
		answer(status, nil, fixture(t, name))(w, r)
	})
	spec := github.Spec()
	call := newCall(t, up.URL+prefix+"/")
	if _, err := spec.Verify(t.Context(), call); err != nil {
		t.Errorf("verify: %v", err)
	}
	all := tools(t)
	for _, c := range []struct{ tool, args string }{
		{"github_search_repositories", `{"q": "tetris"}`},
		{"github_get_file_contents", `{"owner": "octocat", "repo": "Hello-World", "path": "docs/README.md"}`},
		{"github_create_issue", createIssueArgs},
		{"github_get_issue", getIssueArgs},
		{"github_get_pull_request", getPullArgs},
	} {
		if _, err := invoke(t, all[c.tool], call, c.args); err != nil {
			t.Errorf("%s: %v", c.tool, err)
		}
	}
	var got []string
	for _, r := range up.Requests() {
		got = append(got, r.Method+" "+r.Path)
	}
	want := []string{
		"GET /api/v3/user",
		"GET /api/v3/search/repositories",
		"GET /api/v3/repos/octocat/Hello-World/contents/docs/README.md",
		"POST /api/v3/repos/octocat/Hello-World/issues",
		"GET /api/v3/repos/octocat/Hello-World/issues/1347",
		"GET /api/v3/repos/octocat/Hello-World/pulls/1347",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	checkRequests(t, up, prefix)
}
