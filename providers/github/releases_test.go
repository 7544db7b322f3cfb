package github_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/switchboard-hub/switchboard/providers/github"
)

// v100 is the release of the fixtures release.json and releases.json.
var v100 = github.Release{
	ID: 1, TagName: "v1.0.0", Name: "v1.0.0", Body: "Description of the release", TargetCommitish: "master", Author: "octocat",
	HTMLURL: "https://github.com/octocat/Hello-World/releases/v1.0.0", CreatedAt: "2013-02-27T19:35:32Z", PublishedAt: "2013-02-27T19:35:32Z",
	Assets: []github.Asset{{Name: "example.zip", Size: 1024, DownloadURL: "https://github.com/octocat/Hello-World/releases/download/v1.0.0/example.zip"}},
}

func releaseLabelMilestoneCases() []opCase {
	bug := github.Label{Name: "bug", Color: "f29513", Description: "Something isn't working", Default: true}
	enhancement := github.Label{Name: "enhancement", Color: "a2eeef", Description: "New feature or request"}
	v10 := github.Milestone{Number: 1, Title: "v1.0", State: "open", Description: "Tracking milestone for version 1.0", OpenIssues: 4, ClosedIssues: 8,
		DueOn: "2012-10-09T23:39:01Z", HTMLURL: "https://github.com/octocat/Hello-World/milestones/v1.0"}
	return []opCase{
		{
			name: "list releases", tool: "github_list_releases", fixture: "releases.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "limit": 3}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/releases", wantOpID: "repos/list-releases",
			wantQuery: url.Values{"per_page": {"3"}},
			want:      github.ListReleasesOutput{Releases: []github.Release{v100}},
		},
		{
			name: "get latest release", tool: "github_get_latest_release", fixture: "release.json",
			args:       `{"owner": "octocat", "repo": "Hello-World"}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/releases/latest", wantOpID: "repos/get-latest-release",
			want: v100,
		},
		{
			name: "create release", tool: "github_create_release", fixture: "release_created.json", status: http.StatusCreated,
			args: `{"owner": "octocat", "repo": "Hello-World", "tag_name": "v1.0.0", "target_commitish": "master", "name": "v1.0.0",
				"body": "Description of the release", "draft": false, "prerelease": false, "generate_release_notes": true}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octocat/Hello-World/releases", wantOpID: "repos/create-release",
			wantBody: map[string]any{"tag_name": "v1.0.0", "target_commitish": "master", "name": "v1.0.0", "body": "Description of the release",
				"draft": false, "prerelease": false, "generate_release_notes": true},
			want: v100,
		},
		{
			name: "list labels", tool: "github_list_labels", fixture: "labels.json",
			args:       `{"owner": "octocat", "repo": "Hello-World"}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/labels", wantOpID: "issues/list-labels-for-repo",
			wantQuery: url.Values{"per_page": {"30"}},
			want:      github.ListLabelsOutput{Labels: []github.Label{bug, enhancement}},
		},
		{
			name: "create label", tool: "github_create_label", fixture: "label.json", status: http.StatusCreated,
			args:       `{"owner": "octocat", "repo": "Hello-World", "name": "bug", "color": "f29513", "description": "Something isn't working"}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octocat/Hello-World/labels", wantOpID: "issues/create-label",
			wantBody: map[string]any{"name": "bug", "color": "f29513", "description": "Something isn't working"},
			want:     bug,
		},
		{
			name: "add labels to an issue", tool: "github_add_labels_to_issue", fixture: "issue_labels.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "issue_number": 1347, "labels": ["bug", "enhancement"]}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octocat/Hello-World/issues/1347/labels", wantOpID: "issues/add-labels",
			wantBody: map[string]any{"labels": []any{"bug", "enhancement"}},
			want:     github.IssueLabelsOutput{Labels: []github.Label{bug, enhancement}},
		},
		{
			name: "list milestones", tool: "github_list_milestones", fixture: "milestones.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "state": "all", "sort": "completeness", "direction": "desc"}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/milestones", wantOpID: "issues/list-milestones",
			wantQuery: url.Values{"state": {"all"}, "sort": {"completeness"}, "direction": {"desc"}, "per_page": {"30"}},
			want:      github.ListMilestonesOutput{Milestones: []github.Milestone{v10}},
		},
		{
			name: "create milestone", tool: "github_create_milestone", fixture: "milestone.json", status: http.StatusCreated,
			args:       `{"owner": "octocat", "repo": "Hello-World", "title": "v1.0", "description": "Tracking milestone for version 1.0", "due_on": "2012-10-09T23:39:01Z"}`,
			wantMethod: http.MethodPost, wantPath: "/repos/octocat/Hello-World/milestones", wantOpID: "issues/create-milestone",
			wantBody: map[string]any{"title": "v1.0", "description": "Tracking milestone for version 1.0", "due_on": "2012-10-09T23:39:01Z"},
			want:     v10,
		},
	}
}

func TestReleasesLabelsMilestones(t *testing.T) {
	t.Parallel()
	for _, tc := range releaseLabelMilestoneCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
