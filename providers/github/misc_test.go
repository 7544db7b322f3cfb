package github_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/switchboard-hub/switchboard/providers/github"
)

func accountCases() []opCase {
	return []opCase{
		{
			name: "list notifications, all since", tool: "github_list_notifications", fixture: "notifications.json",
			args:       `{"all": true, "participating": false, "since": "2014-11-01T00:00:00Z", "before": "2014-12-01T00:00:00Z", "limit": 50}`,
			wantMethod: http.MethodGet, wantPath: "/notifications", wantOpID: "activity/list-notifications-for-authenticated-user",
			wantQuery: url.Values{"all": {"true"}, "participating": {"false"}, "since": {"2014-11-01T00:00:00Z"}, "before": {"2014-12-01T00:00:00Z"}, "per_page": {"50"}},
			want: github.ListNotificationsOutput{Notifications: []github.Notification{{
				ID: "1", Unread: true, Reason: "subscribed", Repository: "octocat/Hello-World", Title: "Greetings", SubjectType: "Issue",
				SubjectURL: "https://api.github.com/repos/octokit/octokit.rb/issues/123", UpdatedAt: "2014-11-07T22:01:45Z",
			}}},
		},
		{
			name: "mark all read, finished at once", tool: "github_mark_notifications_read", status: http.StatusResetContent,
			args:       `{"last_read_at": "2014-11-07T22:01:45Z"}`,
			wantMethod: http.MethodPut, wantPath: "/notifications", wantOpID: "activity/mark-notifications-as-read",
			wantBody: map[string]any{"read": true, "last_read_at": "2014-11-07T22:01:45Z"},
			want:     github.MarkNotificationsReadOutput{Done: true},
		},
		{
			name: "mark all read, going on in the background", tool: "github_mark_notifications_read", status: http.StatusAccepted, fixture: "notifications_marked.json",
			args:       `{}`,
			wantMethod: http.MethodPut, wantPath: "/notifications", wantOpID: "activity/mark-notifications-as-read",
			wantBody: map[string]any{"read": true},
			want: github.MarkNotificationsReadOutput{Done: false,
				Message: "Unread notifications couldn't be marked in a single request. Notifications are being marked as read in the background."},
		},
		{
			name: "mark one thread read", tool: "github_mark_notification_thread_read", status: http.StatusResetContent,
			args:       `{"thread_id": 1}`,
			wantMethod: http.MethodPatch, wantPath: "/notifications/threads/1", wantOpID: "activity/mark-thread-as-read",
			want: github.MarkThreadReadOutput{ThreadID: 1},
		},
		{
			name: "list gists", tool: "github_list_gists", fixture: "gists.json",
			args:       `{"since": "2011-01-01T00:00:00Z"}`,
			wantMethod: http.MethodGet, wantPath: "/gists", wantOpID: "gists/list",
			wantQuery: url.Values{"since": {"2011-01-01T00:00:00Z"}, "per_page": {"30"}},
			want: github.ListGistsOutput{Gists: []github.Gist{{
				ID: "aa5a315d61ae9438b18d", Description: "Hello World Examples", Public: true, Owner: "octocat", HTMLURL: "https://gist.github.com/aa5a315d61ae9438b18d",
				Files: []github.GistContent{{Filename: "hello_world.rb", Language: "Ruby", Size: 167,
					RawURL: "https://gist.githubusercontent.com/octocat/6cad326836d38bd3a7ae/raw/db9c55113504e46fa076e7df3a04ce592e2e86d8/hello_world.rb"}},
				CreatedAt: "2010-04-14T02:15:15Z", UpdatedAt: "2011-06-20T11:34:15Z",
			}}},
		},
		{
			name: "get gist", tool: "github_get_gist", fixture: "gist.json",
			args:       `{"gist_id": "2decf6c462d9b4418f2"}`,
			wantMethod: http.MethodGet, wantPath: "/gists/2decf6c462d9b4418f2", wantOpID: "gists/get",
			want: readmeGist,
		},
		{
			name: "create gist", tool: "github_create_gist", fixture: "gist_created.json", status: http.StatusCreated,
			args:       `{"description": "An updated gist description.", "public": true, "files": [{"filename": "README.md", "content": "Hello world from GitHub"}]}`,
			wantMethod: http.MethodPost, wantPath: "/gists", wantOpID: "gists/create",
			wantBody: map[string]any{"description": "An updated gist description.", "public": true,
				"files": map[string]any{"README.md": map[string]any{"content": "Hello world from GitHub"}}},
			want: readmeGist,
		},
		{
			name: "get me", tool: "github_get_me", fixture: "user.json",
			args:       `{}`,
			wantMethod: http.MethodGet, wantPath: "/user", wantOpID: "users/get-authenticated",
			want: github.Me{Login: "octocat", ID: 1, Name: "monalisa octocat", Email: "octocat@github.com", Company: "GitHub", Location: "San Francisco",
				Bio: "There once was...", HTMLURL: "https://github.com/octocat", PublicRepos: 2, PrivateRepos: ptr(100), CreatedAt: "2008-01-14T04:33:35Z"},
		},
		{
			name: "list my organizations", tool: "github_list_my_orgs", fixture: "orgs.json",
			args:       `{"limit": 100}`,
			wantMethod: http.MethodGet, wantPath: "/user/orgs", wantOpID: "orgs/list-for-authenticated-user",
			wantQuery: url.Values{"per_page": {"100"}},
			want:      github.ListOrgsOutput{Organizations: []github.OrgBrief{{Login: "github", ID: 1, Description: "A great organization"}}},
		},
		{
			name: "get organization", tool: "github_get_org", fixture: "org.json",
			args:       `{"org": "github"}`,
			wantMethod: http.MethodGet, wantPath: "/orgs/github", wantOpID: "orgs/get",
			want: github.Organization{Login: "github", ID: 1, Name: "github", Description: "A great organization", Blog: "https://github.com/blog",
				Location: "San Francisco", Email: "octocat@github.com", PublicRepos: 2, HTMLURL: "https://github.com/octocat", CreatedAt: "2008-01-14T04:33:35Z"},
		},
		{
			name: "list issue comments", tool: "github_list_issue_comments", fixture: "comments.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "issue_number": 1347, "since": "2011-01-01T00:00:00Z"}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/issues/1347/comments", wantOpID: "issues/list-comments",
			wantQuery: url.Values{"since": {"2011-01-01T00:00:00Z"}, "per_page": {"30"}},
			want: github.ListIssueCommentsOutput{Comments: []github.Comment{{ID: 1, Body: "Me too", User: "octocat",
				HTMLURL: "https://github.com/octocat/Hello-World/issues/1347#issuecomment-1", CreatedAt: "2011-04-14T16:00:49Z", UpdatedAt: "2011-04-14T16:00:49Z"}}},
		},
	}
}

// readmeGist is the gist of gist.json and gist_created.json.
var readmeGist = github.Gist{
	ID: "2decf6c462d9b4418f2", Description: "An updated gist description.", Public: true, Owner: "monalisa", HTMLURL: "https://gist.github.com/2decf6c462d9b4418f2",
	Files: []github.GistContent{{Filename: "README.md", Language: "Markdown", Size: 23,
		RawURL:  "https://gist.githubusercontent.com/monalisa/2decf6c462d9b4418f2/raw/ac3e6daf176fafe73609fd000cd188e4472010fb/README.md",
		Content: ptr("Hello world from GitHub")}},
	CreatedAt: "2022-09-20T12:11:58Z", UpdatedAt: "2022-09-21T10:28:06Z",
}

func TestAccountNotificationsGists(t *testing.T) {
	t.Parallel()
	for _, tc := range accountCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
