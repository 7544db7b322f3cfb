package github_test

import (
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/github"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// The issues of the fixtures, as the tools return them.
var (
	bugIssue = github.Issue{
		Number: 1347, Title: "Found a bug", State: "open", Body: "I'm having a problem with this.", User: "octocat",
		Labels: []string{"bug"}, Assignees: []string{"octocat"}, Milestone: ptr("v1.0"),
		HTMLURL: "https://github.com/octocat/Hello-World/issues/1347", CreatedAt: "2011-04-22T13:33:48Z", UpdatedAt: "2011-04-22T13:33:48Z",
	}
	prAsIssue = github.Issue{
		Number: 1348, Title: "Amazing new feature", State: "open", IsPullRequest: true, Body: "I'm having a problem with this.", User: "octocat",
		Labels: []string{}, Assignees: []string{}, Comments: 2,
		HTMLURL: "https://github.com/octocat/Hello-World/pull/1348", CreatedAt: "2011-04-22T13:33:48Z", UpdatedAt: "2011-04-22T13:33:48Z",
	}
	closedIssue = github.Issue{
		Number: 1347, Title: "Found a bug in the parser", State: "closed", StateReason: "not_planned", Body: "I'm having a problem with this.",
		User: "octocat", Labels: []string{}, Assignees: []string{}, Milestone: ptr("v1.0"),
		HTMLURL: "https://github.com/octocat/Hello-World/issues/1347", CreatedAt: "2011-04-22T13:33:48Z", UpdatedAt: "2011-04-23T09:12:01Z",
		ClosedAt: "2011-04-23T09:12:01Z",
	}
)

func issueCases() []opCase {
	return []opCase{
		{
			name: "list issues, defaults: pull requests are marked", tool: "github_list_issues", fixture: "issues.json",
			args:       `{"owner": "octocat", "repo": "Hello-World"}`,
			header:     http.Header{"Link": {`<https://api.github.com/repositories/1296269/issues?per_page=30&page=2>; rel="next", <https://api.github.com/repositories/1296269/issues?per_page=30&page=5>; rel="last"`}},
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/issues",
			wantQuery: url.Values{"per_page": {"30"}},
			wantOpID:  "issues/list-for-repo",
			want:      github.ListIssuesOutput{Issues: []github.Issue{bugIssue, prAsIssue}, NextCursor: providers.EncodeCursor("page=2&per_page=30")},
		},
		{
			name: "list issues, every filter", tool: "github_list_issues", fixture: "issues.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "state": "all", "labels": ["bug", "good first issue"], "assignee": "*", "sort": "updated", "direction": "asc", "since": "2024-05-01T00:00:00Z", "limit": 50}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/issues",
			wantQuery: url.Values{"state": {"all"}, "labels": {"bug,good first issue"}, "assignee": {"*"}, "sort": {"updated"},
				"direction": {"asc"}, "since": {"2024-05-01T00:00:00Z"}, "per_page": {"50"}},
			wantOpID: "issues/list-for-repo",
			want:     github.ListIssuesOutput{Issues: []github.Issue{bugIssue, prAsIssue}},
		},
		{
			name: "get issue", tool: "github_get_issue", fixture: "issue.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "issue_number": 1347}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/issues/1347",
			wantOpID: "issues/get",
			want:     bugIssue,
		},
		{
			// The least GitHub's description allows: no user, body, assignees or
			// milestone; the output still matches its schema (invoke checks it).
			name: "get issue, a minimal answer", tool: "github_get_issue", fixture: "issue_minimal.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "issue_number": 1347}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/issues/1347",
			wantOpID: "issues/get",
			want: github.Issue{Number: 1347, Title: "Found a bug", State: "open", Labels: []string{}, Assignees: []string{}, HTMLURL: "https://github.com/octocat/Hello-World/issues/1347",
				CreatedAt: "2011-04-22T13:33:48Z", UpdatedAt: "2011-04-22T13:33:48Z"},
		},
		{
			name: "create issue, every field", tool: "github_create_issue", fixture: "issue.json", status: http.StatusCreated,
			args:       `{"owner": "octocat", "repo": "Hello-World", "title": "Found a bug", "body": "I'm having a problem with this.", "labels": ["bug"], "assignees": ["octocat"], "milestone": 1}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octocat/Hello-World/issues",
			wantBody: map[string]any{"title": "Found a bug", "body": "I'm having a problem with this.", "labels": []any{"bug"},
				"assignees": []any{"octocat"}, "milestone": float64(1)},
			wantOpID: "issues/create",
			want:     bugIssue,
		},
		{
			name: "create issue, title only", tool: "github_create_issue", fixture: "issue.json", status: http.StatusCreated,
			args:       `{"owner": "octocat", "repo": "Hello-World", "title": "Found a bug"}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octocat/Hello-World/issues",
			wantBody: map[string]any{"title": "Found a bug"},
			wantOpID: "issues/create",
			want:     bugIssue,
		},
		{
			name: "update issue: close as not planned, rename, clear labels", tool: "github_update_issue", fixture: "issue_closed.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "issue_number": 1347, "title": "Found a bug in the parser", "state": "closed", "state_reason": "not_planned", "labels": []}`,
			wantMethod: http.MethodPatch, wantPath: "/repos/octocat/Hello-World/issues/1347",
			wantBody: map[string]any{"title": "Found a bug in the parser", "state": "closed", "state_reason": "not_planned", "labels": []any{}},
			wantOpID: "issues/update",
			want:     closedIssue,
		},
		{
			name: "update issue: only the body is sent", tool: "github_update_issue", fixture: "issue.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "issue_number": 1347, "body": "I'm having a problem with this."}`,
			wantMethod: http.MethodPatch, wantPath: "/repos/octocat/Hello-World/issues/1347",
			wantBody: map[string]any{"body": "I'm having a problem with this."},
			wantOpID: "issues/update",
			want:     bugIssue,
		},
		{
			name: "add comment", tool: "github_add_issue_comment", fixture: "comment.json", status: http.StatusCreated,
			args:       `{"owner": "octocat", "repo": "Hello-World", "issue_number": 1347, "body": "Me too"}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octocat/Hello-World/issues/1347/comments",
			wantBody: map[string]any{"body": "Me too"},
			wantOpID: "issues/create-comment",
			want: github.Comment{ID: 1, Body: "Me too", User: "octocat", HTMLURL: "https://github.com/octocat/Hello-World/issues/1347#issuecomment-1",
				CreatedAt: "2011-04-14T16:00:49Z", UpdatedAt: "2011-04-14T16:00:49Z"},
		},
	}
}

func TestIssues(t *testing.T) {
	t.Parallel()
	for _, tc := range issueCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}

// TestIssuesRefuseBadInput checks that bad arguments fail as invalid on the field at
// fault, by the schema or by the operation, before anything is sent.
func TestIssuesRefuseBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		tool      string
		args      string
		wantField string
	}{
		{name: "update with nothing to change", tool: "github_update_issue", args: `{"owner": "octocat", "repo": "Hello-World", "issue_number": 1}`, wantField: "arguments"},
		{name: "state_reason without state", tool: "github_update_issue", args: `{"owner": "octocat", "repo": "Hello-World", "issue_number": 1, "state_reason": "completed"}`, wantField: "state_reason"},
		{name: "state outside the enum", tool: "github_update_issue", args: `{"owner": "octocat", "repo": "Hello-World", "issue_number": 1, "state": "done"}`, wantField: "state"},
		{name: "issue number zero", tool: "github_get_issue", args: `{"owner": "octocat", "repo": "Hello-World", "issue_number": 0}`, wantField: "issue_number"},
		{name: "missing title", tool: "github_create_issue", args: `{"owner": "octocat", "repo": "Hello-World"}`, wantField: "title"},
		{name: "blank title", tool: "github_create_issue", args: `{"owner": "octocat", "repo": "Hello-World", "title": "   "}`, wantField: "title"},
		{name: "blank comment", tool: "github_add_issue_comment", args: `{"owner": "octocat", "repo": "Hello-World", "issue_number": 1, "body": " \n"}`, wantField: "body"},
		{name: "label with a comma", tool: "github_list_issues", args: `{"owner": "octocat", "repo": "Hello-World", "labels": ["a,b"]}`, wantField: "labels"},
		{name: "since not a time", tool: "github_list_issues", args: `{"owner": "octocat", "repo": "Hello-World", "since": "yesterday"}`, wantField: "since"},
		{name: "limit over 100", tool: "github_list_issues", args: `{"owner": "octocat", "repo": "Hello-World", "limit": 101}`, wantField: "limit"},
		{name: "cursor not ours", tool: "github_list_issues", args: `{"owner": "octocat", "repo": "Hello-World", "cursor": "page=2"}`, wantField: "cursor"},
		{name: "cursor holding no page number", tool: "github_list_issues", args: `{"owner": "octocat", "repo": "Hello-World", "cursor": "` + providers.EncodeCursor("abc") + `"}`, wantField: "cursor"},
		{name: "cursor for the first page", tool: "github_list_issues", args: `{"owner": "octocat", "repo": "Hello-World", "cursor": "` + providers.EncodeCursor("page=1&per_page=30") + `"}`, wantField: "cursor"},
		{name: "cursor without a page size", tool: "github_list_issues", args: `{"owner": "octocat", "repo": "Hello-World", "cursor": "` + providers.EncodeCursor("2") + `"}`, wantField: "cursor"},
		{name: "cursor with a page size over the maximum", tool: "github_list_issues", args: `{"owner": "octocat", "repo": "Hello-World", "cursor": "` + providers.EncodeCursor("page=2&per_page=101") + `"}`, wantField: "cursor"},
		{name: "unknown argument", tool: "github_list_issues", args: `{"owner": "octocat", "repo": "Hello-World", "page": 2}`, wantField: "page"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, answer(http.StatusOK, nil, []byte(`{}`)))
			_, err := invoke(t, tools(t)[tc.tool], newCall(t, up.URL), tc.args)
			var se *switchboard.Error
			if !errors.As(err, &se) || se.Code != switchboard.CodeInvalid || se.Field != tc.wantField {
				t.Fatalf("error = %v, want invalid on field %s", err, tc.wantField)
			}
			if n := len(up.Requests()); n != 0 {
				t.Errorf("upstream got %d requests, want none", n)
			}
		})
	}
}
