package github_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/github"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

func TestSpecRegisters(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := r.Register(github.Spec()); err != nil {
		t.Fatalf("register: %v", err)
	}
	spec, ok := r.Provider("github")
	if !ok {
		t.Fatal("github is not registered")
	}
	if spec.Title != "GitHub" || spec.BaseURL != "https://api.github.com" || spec.TokenHelp == "" || spec.Verify == nil {
		t.Errorf("spec = %q %q, token help %q, verify set %v", spec.Title, spec.BaseURL, spec.TokenHelp, spec.Verify != nil)
	}
	if diff := cmp.Diff([]providers.AuthKind{providers.AuthAPIKey, providers.AuthOAuth2}, spec.AuthKinds); diff != "" {
		t.Errorf("auth kinds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}, spec.Headers); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if spec.RateLimit.PerSecond <= 0 || spec.RateLimit.Burst < 1 {
		t.Errorf("rate limit = %+v, want a bucket", spec.RateLimit)
	}

	var names []string
	for _, tool := range r.Tools("github") {
		names = append(names, tool.Name)
	}
	want := []string{
		"github_get_me", "github_list_my_orgs", "github_get_org", "github_list_org_repos",
		"github_search_repositories", "github_get_repository", "github_create_repository", "github_fork_repository",
		"github_list_branches", "github_create_branch", "github_list_commits", "github_get_commit",
		"github_get_file_contents", "github_create_or_update_file", "github_push_files", "github_search_code",
		"github_list_issues", "github_search_issues", "github_get_issue", "github_create_issue", "github_update_issue",
		"github_list_issue_comments", "github_add_issue_comment",
		"github_list_labels", "github_create_label", "github_add_labels_to_issue", "github_list_milestones", "github_create_milestone",
		"github_list_pull_requests", "github_get_pull_request", "github_create_pull_request", "github_get_pull_request_files",
		"github_get_pull_request_status", "github_get_pull_request_comments", "github_get_pull_request_reviews",
		"github_create_pull_request_review", "github_merge_pull_request", "github_update_pull_request_branch",
		"github_list_releases", "github_get_latest_release", "github_create_release",
		"github_list_workflow_runs", "github_rerun_workflow_run", "github_get_workflow_run_logs_url",
		"github_list_notifications", "github_mark_notifications_read", "github_mark_notification_thread_read",
		"github_list_gists", "github_get_gist", "github_create_gist", "github_search_users",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if err := r.Register(github.Spec()); err == nil {
		t.Error("registering github twice succeeded")
	}
}

// TestHints pins each tool's annotations: they decide whether a client asks before a
// call and whether the client kit retries it.
func TestHints(t *testing.T) {
	t.Parallel()
	read := providers.Hints{ReadOnly: true, Idempotent: true}
	create := providers.Hints{}
	overwrite := providers.Hints{Destructive: true}
	idempotent := providers.Hints{Idempotent: true}
	want := map[string]providers.Hints{
		"github_search_repositories": read, "github_get_file_contents": read, "github_list_issues": read,
		"github_get_issue": read, "github_list_pull_requests": read, "github_get_pull_request": read,
		"github_get_me": read, "github_list_my_orgs": read, "github_get_org": read, "github_list_org_repos": read,
		"github_get_repository": read, "github_list_branches": read, "github_list_commits": read, "github_get_commit": read,
		"github_search_code": read, "github_search_issues": read, "github_search_users": read, "github_list_issue_comments": read,
		"github_list_labels": read, "github_list_milestones": read, "github_get_pull_request_files": read,
		"github_get_pull_request_status": read, "github_get_pull_request_comments": read, "github_get_pull_request_reviews": read,
		"github_list_releases": read, "github_get_latest_release": read, "github_list_workflow_runs": read,
		"github_get_workflow_run_logs_url": read, "github_list_notifications": read, "github_list_gists": read, "github_get_gist": read,
		"github_create_issue": create, "github_add_issue_comment": create, "github_create_pull_request": create,
		"github_create_repository": create, "github_create_branch": create, "github_create_label": create,
		"github_create_milestone": create, "github_create_pull_request_review": create, "github_update_pull_request_branch": create,
		"github_create_release": create, "github_rerun_workflow_run": create, "github_create_gist": create,
		// Forking twice returns the existing fork; adding a label or marking read twice changes nothing.
		"github_fork_repository": idempotent, "github_add_labels_to_issue": idempotent,
		"github_mark_notifications_read": idempotent, "github_mark_notification_thread_read": idempotent,
		// These replace what was there (file contents, a branch's head, the base branch).
		"github_create_or_update_file": overwrite, "github_push_files": overwrite, "github_merge_pull_request": overwrite,
		"github_update_issue": {Destructive: true, Idempotent: true},
	}
	all := tools(t)
	for name := range all {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: no hints pinned here; decide them and add it", name)
		}
	}
	for name, want := range want {
		tool := all[name]
		if tool == nil {
			t.Errorf("no tool %s", name)
			continue
		}
		if tool.Info.Hints != want {
			t.Errorf("%s hints = %+v, want %+v", name, tool.Info.Hints, want)
		}
		if !strings.HasPrefix(tool.Info.DocsURL, "https://docs.github.com/rest/") {
			t.Errorf("%s docs URL = %q", name, tool.Info.DocsURL)
		}
		// Any token reads a public profile: these two need no scope.
		if scopeFree := name == "github_get_me" || name == "github_search_users"; len(tool.Info.Scopes) == 0 && !scopeFree {
			t.Errorf("%s lists no scopes", name)
		} else if scopeFree && len(tool.Info.Scopes) > 0 {
			t.Errorf("%s lists scopes %v; any token may call it", name, tool.Info.Scopes)
		}
	}
}

func TestGoldenSchemas(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := r.Register(github.Spec()); err != nil {
		t.Fatalf("register: %v", err)
	}
	providertest.GoldenSchemas(t, r.Tools("github"))
}

func TestVerify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		status   int
		header   http.Header
		body     []byte
		want     providers.Account
		wantCode switchboard.Code
	}{
		{
			name: "classic token with scopes", status: http.StatusOK,
			header: http.Header{"X-OAuth-Scopes": {"repo, read:org"}, "X-Accepted-OAuth-Scopes": {""}},
			body:   fixture(t, "user.json"),
			want:   providers.Account{ID: "1", Label: "octocat", Scopes: []string{"repo", "read:org"}},
		},
		{
			name: "fine-grained token sends no scopes", status: http.StatusOK,
			body: fixture(t, "user.json"),
			want: providers.Account{ID: "1", Label: "octocat", Scopes: []string{}},
		},
		{
			name: "revoked token", status: http.StatusUnauthorized,
			body:     []byte(`{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"}`),
			wantCode: switchboard.CodeReconnect,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, answer(tc.status, tc.header, tc.body))
			spec := github.Spec()
			got, err := spec.Verify(context.Background(), providertest.NewCall(t, &spec, up.URL, testToken))
			if code := switchboard.CodeOf(err); code != tc.wantCode {
				t.Fatalf("error = %v, want code %q", err, tc.wantCode)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("account (-want +got):\n%s", diff)
			}
			req := up.Last(t)
			if req.Method != http.MethodGet || req.Path != "/user" {
				t.Errorf("request = %s %s, want GET /user", req.Method, req.Path)
			}
			ids := checkRequests(t, up, "")
			if !slices.Equal(ids, []string{"users/get-authenticated"}) {
				t.Errorf("requests matched %q, want users/get-authenticated", ids)
			}
			providertest.GitHubDescription(t).CheckResponse(t, "users/get-authenticated", tc.status, tc.body)
		})
	}
}

// TestCatalog checks that every operation's catalog entry is fit for an agent choosing
// among hundreds of tools: what it does and returns, docs, deliberate hints, described
// and exemplified parameters, an output schema with properties.
func TestCatalog(t *testing.T) {
	t.Parallel()
	providertest.CheckCatalog(t, github.Spec())
}
