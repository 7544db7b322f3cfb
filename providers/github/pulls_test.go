package github_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/github"
)

// The pull requests of the fixtures, as the tools return them.
var (
	helloBase = github.Branch{Label: "octocat:master", Ref: "master", SHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e", Repo: "octocat/Hello-World"}
	featureBr = github.Branch{Label: "octocat:new-topic", Ref: "new-topic", SHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e", Repo: "octocat/Hello-World"}
	featurePR = github.PullRequest{
		Number: 1347, Title: "Amazing new feature", State: "open", Body: "Please pull these awesome changes in!", User: "octocat",
		Head: featureBr, Base: helloBase, Labels: []string{"bug"}, Assignees: []string{"octocat", "hubot"},
		RequestedReviewers: []string{"other_user"}, Milestone: ptr("v1.0"), HTMLURL: "https://github.com/octocat/Hello-World/pull/1347",
		CreatedAt: "2011-01-26T19:01:12Z", UpdatedAt: "2011-01-26T19:01:12Z",
	}
	featurePRFull = func() github.PullRequest {
		pr := featurePR
		pr.Mergeable, pr.MergeableState = ptr(true), "clean"
		pr.Comments, pr.ReviewComments, pr.Commits = ptr(10), ptr(0), ptr(3)
		pr.Additions, pr.Deletions, pr.ChangedFiles = ptr(100), ptr(3), ptr(5)
		return pr
	}()
	mergedPR = github.PullRequest{
		Number: 1346, Title: "Fix typo in README", State: "closed", Merged: true, User: "octocat",
		Head: github.Branch{Label: "octocat:fix-typo", Ref: "fix-typo", SHA: "3f2b7e1c9d8a4b6e5f0a1c2d3e4f5a6b7c8d9e0f", Repo: "octocat/Hello-World"},
		Base: helloBase, Labels: []string{}, Assignees: []string{}, RequestedReviewers: []string{},
		HTMLURL: "https://github.com/octocat/Hello-World/pull/1346", CreatedAt: "2011-01-26T19:01:12Z", UpdatedAt: "2011-01-27T10:00:00Z",
		ClosedAt: "2011-01-27T10:00:00Z", MergedAt: "2011-01-27T10:00:00Z",
	}
)

func pullCases() []opCase {
	return []opCase{
		{
			name: "list pull requests, defaults", tool: "github_list_pull_requests", fixture: "pulls.json",
			args:       `{"owner": "octocat", "repo": "Hello-World"}`,
			header:     http.Header{"Link": {`<https://api.github.com/repositories/1296269/pulls?per_page=30&page=2>; rel="next", <https://api.github.com/repositories/1296269/pulls?per_page=30&page=2>; rel="last"`}},
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/pulls",
			wantQuery: url.Values{"per_page": {"30"}},
			wantOpID:  "pulls/list",
			want:      github.ListPullRequestsOutput{PullRequests: []github.PullRequest{featurePR, mergedPR}, NextCursor: providers.EncodeCursor("page=2&per_page=30")},
		},
		{
			name: "list pull requests, every filter", tool: "github_list_pull_requests", fixture: "pulls.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "state": "closed", "head": "octocat:fix-typo", "base": "master", "sort": "long-running", "direction": "asc", "limit": 5}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/pulls",
			wantQuery: url.Values{"state": {"closed"}, "head": {"octocat:fix-typo"}, "base": {"master"}, "sort": {"long-running"},
				"direction": {"asc"}, "per_page": {"5"}},
			wantOpID: "pulls/list",
			want:     github.ListPullRequestsOutput{PullRequests: []github.PullRequest{featurePR, mergedPR}},
		},
		{
			name: "get pull request", tool: "github_get_pull_request", fixture: "pull.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "pull_number": 1347}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/pulls/1347",
			wantOpID: "pulls/get",
			want:     featurePRFull,
		},
		{
			name: "create pull request, every field", tool: "github_create_pull_request", fixture: "pull.json", status: http.StatusCreated,
			args:       `{"owner": "octocat", "repo": "Hello-World", "title": "Amazing new feature", "head": "octocat:new-topic", "base": "master", "body": "Please pull these awesome changes in!", "draft": false, "maintainer_can_modify": true}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octocat/Hello-World/pulls",
			wantBody: map[string]any{"title": "Amazing new feature", "head": "octocat:new-topic", "base": "master",
				"body": "Please pull these awesome changes in!", "draft": false, "maintainer_can_modify": true},
			wantOpID: "pulls/create",
			want:     featurePRFull,
		},
		{
			name: "create pull request, required fields only", tool: "github_create_pull_request", fixture: "pull.json", status: http.StatusCreated,
			args:       `{"owner": "octocat", "repo": "Hello-World", "title": "Amazing new feature", "head": "new-topic", "base": "master"}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octocat/Hello-World/pulls",
			wantBody: map[string]any{"title": "Amazing new feature", "head": "new-topic", "base": "master"},
			wantOpID: "pulls/create",
			want:     featurePRFull,
		},
	}
}

func TestPullRequests(t *testing.T) {
	t.Parallel()
	for _, tc := range pullCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
