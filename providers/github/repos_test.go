package github_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/github"
)

// helloRepo is the repository of the fixtures repo.json, repo_full.json and org_repos.json.
var helloRepo = github.Repository{
	FullName: "octocat/Hello-World", Owner: "octocat", Name: "Hello-World", Description: "This your first repo!",
	HTMLURL: "https://github.com/octocat/Hello-World", Topics: []string{"octocat", "atom", "electron", "api"},
	StargazersCount: 80, ForksCount: 9, DefaultBranch: "master", UpdatedAt: "2011-01-26T19:14:43Z", PushedAt: "2011-01-26T19:06:43Z",
}

// helloHead is the head of the master branch in ref.json.
const helloHead = "aa218f56b14c9653891f9e74264a383fa43fefbd"

func repoCases() []opCase {
	goRepo := helloRepo
	goRepo.Language = "Go"
	fork := helloRepo
	fork.FullName, fork.Owner, fork.HTMLURL, fork.Fork = "hubot/Hello-World", "hubot", "https://github.com/hubot/Hello-World", true
	return []opCase{
		{
			name: "get repository", tool: "github_get_repository", fixture: "repo.json",
			args:       `{"owner": "octocat", "repo": "Hello-World"}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World", wantOpID: "repos/get",
			want: goRepo,
		},
		{
			name: "create repository for the user", tool: "github_create_repository", fixture: "repo_full.json", status: http.StatusCreated,
			args:       `{"name": "Hello-World", "description": "This your first repo!", "private": false, "auto_init": true, "gitignore_template": "Go", "license_template": "mit"}`,
			wantMethod: http.MethodPost, wantPath: "/user/repos", wantOpID: "repos/create-for-authenticated-user",
			wantBody: map[string]any{"name": "Hello-World", "description": "This your first repo!", "private": false, "auto_init": true,
				"gitignore_template": "Go", "license_template": "mit"},
			want: helloRepo,
		},
		{
			name: "create repository in an organization", tool: "github_create_repository", fixture: "repo_full.json", status: http.StatusCreated,
			args:       `{"name": "Hello-World", "organization": "octo-org", "private": true}`,
			wantMethod: http.MethodPost, wantPath: "/orgs/octo-org/repos", wantOpID: "repos/create-in-org",
			wantBody: map[string]any{"name": "Hello-World", "private": true},
			want:     helloRepo,
		},
		{
			name: "fork repository", tool: "github_fork_repository", fixture: "fork.json", status: http.StatusAccepted,
			args:       `{"owner": "octocat", "repo": "Hello-World", "organization": "hubot", "default_branch_only": true}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octocat/Hello-World/forks", wantOpID: "repos/create-fork",
			wantBody: map[string]any{"organization": "hubot", "default_branch_only": true},
			want:     fork,
		},
		{
			name: "list branches, protected only", tool: "github_list_branches", fixture: "branches.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "protected": true, "limit": 10}`,
			header:     http.Header{"Link": {`<https://api.github.com/repositories/1296269/branches?protected=true&per_page=10&page=2>; rel="next"`}},
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/branches", wantOpID: "repos/list-branches",
			wantQuery: url.Values{"protected": {"true"}, "per_page": {"10"}},
			want: github.ListBranchesOutput{Branches: []github.RepoBranch{{Name: "master", SHA: "c5b97d5ae6c19d5c5df71a34c7fbeeda2479ccbc", Protected: true}},
				NextCursor: providers.EncodeCursor("page=2&per_page=10")},
		},
		{
			name: "create branch from a named branch", tool: "github_create_branch",
			args: `{"owner": "octocat", "repo": "Hello-World", "branch": "featureA", "from_branch": "release/1.x"}`,
			flow: []exchange{
				{method: http.MethodGet, path: "/repos/octocat/Hello-World/git/ref/heads/release/1.x", opID: "git/get-ref", fixture: "ref.json"},
				{method: http.MethodPost, path: "/repos/octocat/Hello-World/git/refs", opID: "git/create-ref", status: http.StatusCreated, fixture: "ref_created.json",
					body: map[string]any{"ref": "refs/heads/featureA", "sha": helloHead}},
			},
			want: github.BranchRef{Ref: "refs/heads/featureA", SHA: helloHead},
		},
		{
			name: "create branch from the default branch", tool: "github_create_branch",
			args: `{"owner": "octocat", "repo": "Hello-World", "branch": "featureA"}`,
			flow: []exchange{
				{method: http.MethodGet, path: "/repos/octocat/Hello-World", opID: "repos/get", fixture: "repo.json"},
				{method: http.MethodGet, path: "/repos/octocat/Hello-World/git/ref/heads/master", opID: "git/get-ref", fixture: "ref.json"},
				{method: http.MethodPost, path: "/repos/octocat/Hello-World/git/refs", opID: "git/create-ref", status: http.StatusCreated, fixture: "ref_created.json",
					body: map[string]any{"ref": "refs/heads/featureA", "sha": helloHead}},
			},
			want: github.BranchRef{Ref: "refs/heads/featureA", SHA: helloHead},
		},
		{
			name: "list commits, every filter", tool: "github_list_commits", fixture: "commits.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "sha": "main", "path": "README.md", "author": "octocat", "since": "2011-01-01T00:00:00Z", "until": "2012-01-01T00:00:00Z", "limit": 5}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/commits", wantOpID: "repos/list-commits",
			wantQuery: url.Values{"sha": {"main"}, "path": {"README.md"}, "author": {"octocat"}, "since": {"2011-01-01T00:00:00Z"},
				"until": {"2012-01-01T00:00:00Z"}, "per_page": {"5"}},
			want: github.ListCommitsOutput{Commits: []github.Commit{{
				SHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e", Message: "Fix all the bugs", AuthorName: "Monalisa Octocat",
				AuthorEmail: "support@github.com", Author: "octocat", Date: "2011-04-14T16:00:49Z",
				HTMLURL: "https://github.com/octocat/Hello-World/commit/6dcb09b5b57875f334f61aebed695e2e4193db5e",
			}}},
		},
		{
			name: "get commit", tool: "github_get_commit", fixture: "commit.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "ref": "6dcb09b5b57875f334f61aebed695e2e4193db5e"}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/commits/6dcb09b5b57875f334f61aebed695e2e4193db5e", wantOpID: "repos/get-commit",
			want: github.CommitDetail{
				Commit: github.Commit{SHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e", Message: "Fix all the bugs", AuthorName: "Monalisa Octocat",
					AuthorEmail: "mona@github.com", Author: "octocat", Date: "2011-04-14T16:00:49Z",
					HTMLURL: "https://github.com/octocat/Hello-World/commit/6dcb09b5b57875f334f61aebed695e2e4193db5e"},
				Parents: []string{"6dcb09b5b57875f334f61aebed695e2e4193db5e"}, Additions: 104, Deletions: 4,
				Files: []github.FileChange{{Filename: "file1.txt", Status: "modified", Additions: 10, Deletions: 2, Changes: 12, Patch: "@@ -29,7 +29,7 @@\n....."}},
			},
		},
		{
			name: "list organization repositories", tool: "github_list_org_repos", fixture: "org_repos.json",
			args:       `{"org": "octo-org", "type": "sources", "sort": "pushed", "direction": "desc"}`,
			wantMethod: http.MethodGet, wantPath: "/orgs/octo-org/repos", wantOpID: "repos/list-for-org",
			wantQuery: url.Values{"type": {"sources"}, "sort": {"pushed"}, "direction": {"desc"}, "per_page": {"30"}},
			want:      github.ListOrgReposOutput{Repositories: []github.Repository{helloRepo}},
		},
	}
}

func TestRepositories(t *testing.T) {
	t.Parallel()
	for _, tc := range repoCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
