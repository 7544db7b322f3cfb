package github_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// TestOperationsRefuseBadInput checks that bad arguments to the operations fail as
// invalid on the field at fault, by the schema or by the operation, and that nothing
// is sent to GitHub.
func TestOperationsRefuseBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		tool      string
		args      string
		wantField string
	}{
		{name: "review: COMMENT without a body", tool: "github_create_pull_request_review", args: `{"owner": "o", "repo": "r", "pull_number": 1, "event": "COMMENT"}`, wantField: "body"},
		{name: "review: REQUEST_CHANGES with a blank body", tool: "github_create_pull_request_review", args: `{"owner": "o", "repo": "r", "pull_number": 1, "event": "REQUEST_CHANGES", "body": " "}`, wantField: "body"},
		{name: "review: unknown verdict", tool: "github_create_pull_request_review", args: `{"owner": "o", "repo": "r", "pull_number": 1, "event": "LGTM"}`, wantField: "event"},
		{name: "review: line comment with a blank path", tool: "github_create_pull_request_review", args: `{"owner": "o", "repo": "r", "pull_number": 1, "event": "APPROVE", "comments": [{"path": " ", "line": 1, "body": "x"}]}`, wantField: "comments[0].path"},
		{name: "merge: unknown method", tool: "github_merge_pull_request", args: `{"owner": "o", "repo": "r", "pull_number": 1, "merge_method": "fast-forward"}`, wantField: "merge_method"},
		{name: "status: pull number zero", tool: "github_get_pull_request_status", args: `{"owner": "o", "repo": "r", "pull_number": 0}`, wantField: "pull_number"},
		{name: "gist: the same file twice", tool: "github_create_gist", args: `{"files": [{"filename": "a.txt", "content": "1"}, {"filename": "a.txt", "content": "2"}]}`, wantField: "files[1].filename"},
		{name: "gist: blank content", tool: "github_create_gist", args: `{"files": [{"filename": "a.txt", "content": "  "}]}`, wantField: "files[0].content"},
		{name: "gist: file name with a slash", tool: "github_create_gist", args: `{"files": [{"filename": "a/b.txt", "content": "x"}]}`, wantField: "files[0].filename"},
		{name: "gist: id with a slash", tool: "github_get_gist", args: `{"gist_id": "aa5a/../x"}`, wantField: "gist_id"},
		{name: "commits: since not a time", tool: "github_list_commits", args: `{"owner": "o", "repo": "r", "since": "last week"}`, wantField: "since"},
		{name: "milestone: due_on not a time", tool: "github_create_milestone", args: `{"owner": "o", "repo": "r", "title": "v1", "due_on": "next month"}`, wantField: "due_on"},
		{name: "milestone: blank title", tool: "github_create_milestone", args: `{"owner": "o", "repo": "r", "title": " "}`, wantField: "title"},
		{name: "re-run: run id zero", tool: "github_rerun_workflow_run", args: `{"owner": "o", "repo": "r", "run_id": 0}`, wantField: "run_id"},
		{name: "runs: unknown status", tool: "github_list_workflow_runs", args: `{"owner": "o", "repo": "r", "status": "broken"}`, wantField: "status"},
		{name: "thread: id zero", tool: "github_mark_notification_thread_read", args: `{"thread_id": 0}`, wantField: "thread_id"},
		{name: "notifications: before not a time", tool: "github_list_notifications", args: `{"before": "yesterday"}`, wantField: "before"},
		{name: "mark read: last_read_at not a time", tool: "github_mark_notifications_read", args: `{"last_read_at": "now"}`, wantField: "last_read_at"},
		{name: "label: color with a #", tool: "github_create_label", args: `{"owner": "o", "repo": "r", "name": "bug", "color": "#f29513"}`, wantField: "color"},
		{name: "labels: none given", tool: "github_add_labels_to_issue", args: `{"owner": "o", "repo": "r", "issue_number": 1, "labels": []}`, wantField: "labels"},
		{name: "labels: a blank name", tool: "github_add_labels_to_issue", args: `{"owner": "o", "repo": "r", "issue_number": 1, "labels": ["bug", " "]}`, wantField: "labels"},
		{name: "release: tag with a space", tool: "github_create_release", args: `{"owner": "o", "repo": "r", "tag_name": "v 1"}`, wantField: "tag_name"},
		{name: "org: name with a slash", tool: "github_get_org", args: `{"org": "a/b"}`, wantField: "org"},
		{name: "org repos: unknown type", tool: "github_list_org_repos", args: `{"org": "github", "type": "everything"}`, wantField: "type"},
		{name: "repository: organization dot-dot", tool: "github_create_repository", args: `{"name": "x", "organization": ".."}`, wantField: "organization"},
		{name: "fork: name with a space", tool: "github_fork_repository", args: `{"owner": "o", "repo": "r", "name": "my fork"}`, wantField: "name"},
		{name: "search code: blank query", tool: "github_search_code", args: `{"q": "  "}`, wantField: "q"},
		{name: "search issues: unknown sort", tool: "github_search_issues", args: `{"q": "is:issue", "sort": "stars"}`, wantField: "sort"},
		{name: "comments: cursor not ours", tool: "github_list_issue_comments", args: `{"owner": "o", "repo": "r", "issue_number": 1, "cursor": "page=2"}`, wantField: "cursor"},
		{name: "me: an argument it does not take", tool: "github_get_me", args: `{"login": "octocat"}`, wantField: "login"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, answer(http.StatusOK, nil, []byte(`{}`)))
			tool := tools(t)[tc.tool]
			if tool == nil {
				t.Fatalf("no tool %s", tc.tool)
			}
			_, err := invoke(t, tool, newCall(t, up.URL), tc.args)
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
