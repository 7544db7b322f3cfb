package github_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers/github"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// logsLocation is where GitHub's description says the logs endpoint redirects.
const logsLocation = "https://pipelines.actions.githubusercontent.com/ab1f3cCFPB34Nd6imvFxpGZH5hNlDp2wijMwl2gDoO0bcrrlJj/_apis/pipelines/1/runs/19/signedlogcontent?urlExpires=2020-01-22T22%3A44%3A54.1389777Z&urlSigningMethod=HMACV1&urlSignature=2TUDfIg4fm36OJmfPy6km5QD5DLCOkBVzvhWZM8B%2BUY%3D"

func actionsCases() []opCase {
	return []opCase{
		{
			name: "list workflow runs, filtered", tool: "github_list_workflow_runs", fixture: "workflow_runs.json",
			args:       `{"owner": "octo-org", "repo": "octo-repo", "branch": "master", "head_sha": "acb5820ced9479c074f688cc328bf03f341a511d", "event": "push", "actor": "octocat", "status": "queued"}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octo-org/octo-repo/actions/runs", wantOpID: "actions/list-workflow-runs-for-repo",
			wantQuery: url.Values{"branch": {"master"}, "head_sha": {"acb5820ced9479c074f688cc328bf03f341a511d"}, "event": {"push"}, "actor": {"octocat"},
				"status": {"queued"}, "per_page": {"30"}},
			want: github.ListWorkflowRunsOutput{TotalCount: 1, Runs: []github.WorkflowRun{{
				ID: 30433642, Name: "Build", Title: "Update README.md", Status: "queued", Branch: "master", HeadSHA: "acb5820ced9479c074f688cc328bf03f341a511d",
				Event: "push", Actor: "octocat", RunNumber: 562, Attempt: 1, HTMLURL: "https://github.com/octo-org/octo-repo/actions/runs/30433642",
				CreatedAt: "2020-01-22T19:33:08Z", UpdatedAt: "2020-01-22T19:33:08Z",
			}}},
		},
		{
			name: "re-run with debug logging", tool: "github_rerun_workflow_run", fixture: "empty_object.json", status: http.StatusCreated,
			args:       `{"owner": "octo-org", "repo": "octo-repo", "run_id": 30433642, "enable_debug_logging": true}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octo-org/octo-repo/actions/runs/30433642/rerun", wantOpID: "actions/re-run-workflow",
			wantBody: map[string]any{"enable_debug_logging": true},
			want:     github.RerunWorkflowRunOutput{RunID: 30433642, Queued: true},
		},
		{
			name: "re-run without a body", tool: "github_rerun_workflow_run", fixture: "empty_object.json", status: http.StatusCreated,
			args:       `{"owner": "octo-org", "repo": "octo-repo", "run_id": 30433642}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octo-org/octo-repo/actions/runs/30433642/rerun", wantOpID: "actions/re-run-workflow",
			want: github.RerunWorkflowRunOutput{RunID: 30433642, Queued: true},
		},
		{
			name: "logs URL: the redirect is returned, not followed", tool: "github_get_workflow_run_logs_url", status: http.StatusFound,
			header:     http.Header{"Location": {logsLocation}},
			args:       `{"owner": "octo-org", "repo": "octo-repo", "run_id": 30433642}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octo-org/octo-repo/actions/runs/30433642/logs", wantOpID: "actions/download-workflow-run-logs",
			want: github.WorkflowRunLogsURL{URL: logsLocation, ExpiresIn: 60},
		},
	}
}

func TestActions(t *testing.T) {
	t.Parallel()
	for _, tc := range actionsCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}

// TestLogsURLIsNotFollowed points the redirect at the fake itself: a client that
// followed it would send a second request (with the token) and download the logs.
func TestLogsURLIsNotFollowed(t *testing.T) {
	t.Parallel()
	var up *providertest.Upstream
	up = providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/download/logs.zip" {
			answer(http.StatusOK, nil, []byte("PK\x03\x04"))(w, r)
			return
		}
		answer(http.StatusFound, http.Header{"Location": {up.URL + "/download/logs.zip?sig=abc"}}, nil)(w, r)
	})
	out, err := invoke(t, tools(t)["github_get_workflow_run_logs_url"], newCall(t, up.URL), `{"owner": "o", "repo": "r", "run_id": 5}`)
	if err != nil {
		t.Fatalf("logs URL: %v", err)
	}
	if diff := cmp.Diff(github.WorkflowRunLogsURL{URL: up.URL + "/download/logs.zip?sig=abc", ExpiresIn: 60}, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if n := len(up.Requests()); n != 1 {
		t.Errorf("upstream got %d requests, want 1: the redirect was followed", n)
	}
}

// TestLogsURLWithoutRedirect checks that an answer without the documented redirect is
// an upstream error, not an empty URL.
func TestLogsURLWithoutRedirect(t *testing.T) {
	t.Parallel()
	up := providertest.NewUpstream(t, answer(http.StatusOK, nil, []byte(`{}`)))
	_, err := invoke(t, tools(t)["github_get_workflow_run_logs_url"], newCall(t, up.URL), `{"owner": "o", "repo": "r", "run_id": 5}`)
	if code := switchboard.CodeOf(err); code != switchboard.CodeUpstream {
		t.Fatalf("error = %v, want code upstream", err)
	}
}
