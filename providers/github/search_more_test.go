package github_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/github"
)

func searchMoreCases() []opCase {
	return []opCase{
		{
			name: "search code", tool: "github_search_code", fixture: "search_code.json",
			args:       `{"q": "addClass in:file language:js repo:jquery/jquery", "limit": 10}`,
			header:     http.Header{"Link": {`<https://api.github.com/search/code?q=addClass&per_page=10&page=2>; rel="next"`}},
			wantMethod: http.MethodGet, wantPath: "/search/code", wantOpID: "search/code",
			wantQuery: url.Values{"q": {"addClass in:file language:js repo:jquery/jquery"}, "per_page": {"10"}},
			want: github.SearchCodeOutput{TotalCount: 7, Items: []github.CodeHit{{
				Owner: "jquery", Repo: "jquery", Path: "src/attributes/classes.js", Name: "classes.js", SHA: "d7212f9dee2dcc18f084d7df8f417b80846ded5a",
				HTMLURL: "https://github.com/jquery/jquery/blob/825ac3773694e0cd23ee74895fd5aeb535b27da4/src/attributes/classes.js",
			}}, NextCursor: providers.EncodeCursor("page=2&per_page=10")},
		},
		{
			name: "search issues", tool: "github_search_issues", fixture: "search_issues.json",
			args:       `{"q": "is:issue windows label:bug", "sort": "created", "order": "asc"}`,
			wantMethod: http.MethodGet, wantPath: "/search/issues", wantOpID: "search/issues-and-pull-requests",
			wantQuery: url.Values{"q": {"is:issue windows label:bug"}, "sort": {"created"}, "order": {"asc"}, "per_page": {"30"}},
			want: github.SearchIssuesOutput{TotalCount: 280, Items: []github.IssueInRepo{{
				Repository: "batterseapower/pinyin-toolkit",
				Issue: github.Issue{
					Number: 132, Title: "Line Number Indexes Beyond 20 Not Displayed", State: "open", StateReason: "completed", IsPullRequest: true,
					Body: "...", User: "Nick3C", Labels: []string{"bug"}, Assignees: []string{}, Milestone: ptr("v1.0"), Comments: 15, Locked: true,
					HTMLURL: "https://github.com/batterseapower/pinyin-toolkit/issues/132", CreatedAt: "2009-07-12T20:10:41Z", UpdatedAt: "2009-07-19T09:23:43Z",
				},
			}}},
		},
		{
			name: "search users", tool: "github_search_users", fixture: "search_users.json",
			args:       `{"q": "tom repos:>42 followers:>1000", "sort": "followers", "cursor": "` + providers.EncodeCursor("page=2&per_page=50") + `"}`,
			wantMethod: http.MethodGet, wantPath: "/search/users", wantOpID: "search/users",
			wantQuery: url.Values{"q": {"tom repos:>42 followers:>1000"}, "sort": {"followers"}, "page": {"2"}, "per_page": {"50"}},
			want:      github.SearchUsersOutput{TotalCount: 12, Items: []github.Account{{Login: "mojombo", ID: 1, Type: "User", HTMLURL: "https://github.com/mojombo"}}},
		},
	}
}

func TestSearchMore(t *testing.T) {
	t.Parallel()
	for _, tc := range searchMoreCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
