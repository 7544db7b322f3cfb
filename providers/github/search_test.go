package github_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/github"
)

func searchRepositoriesCases() []opCase {
	tetris := github.Repository{
		FullName: "dtrupenn/Tetris", Owner: "dtrupenn", Name: "Tetris",
		Description: "A C implementation of Tetris using Pennsim through LC4", HTMLURL: "https://github.com/dtrupenn/Tetris",
		Archived: true, Language: "Assembly", Topics: []string{"tetris", "lc4"}, StargazersCount: 1,
		DefaultBranch: "master", UpdatedAt: "2013-01-05T17:58:47Z", PushedAt: "2012-01-01T00:37:02Z",
	}
	next := http.Header{"Link": {`<https://api.github.com/search/repositories?q=tetris+language%3Aassembly&per_page=30&page=2>; rel="next", <https://api.github.com/search/repositories?q=tetris+language%3Aassembly&per_page=30&page=34>; rel="last"`}}
	return []opCase{
		{
			name: "first page, defaults", tool: "github_search_repositories", fixture: "search_repositories.json",
			args:       `{"q": "tetris language:assembly"}`,
			header:     next,
			wantMethod: http.MethodGet, wantPath: "/search/repositories",
			wantQuery: url.Values{"q": {"tetris language:assembly"}, "per_page": {"30"}},
			wantOpID:  "search/repos",
			want: github.SearchRepositoriesOutput{TotalCount: 40, Items: []github.Repository{tetris},
				NextCursor: providers.EncodeCursor("page=2&per_page=30")},
		},
		{
			name: "sorted, later page, last", tool: "github_search_repositories", fixture: "search_repositories.json",
			args:       `{"q": "tetris", "sort": "stars", "order": "asc", "limit": 100, "cursor": "` + providers.EncodeCursor("page=3&per_page=100") + `"}`,
			wantMethod: http.MethodGet, wantPath: "/search/repositories",
			wantQuery: url.Values{"q": {"tetris"}, "sort": {"stars"}, "order": {"asc"}, "per_page": {"100"}, "page": {"3"}},
			wantOpID:  "search/repos",
			want:      github.SearchRepositoriesOutput{TotalCount: 40, Items: []github.Repository{tetris}},
		},
	}
}

func TestSearchRepositories(t *testing.T) {
	t.Parallel()
	for _, tc := range searchRepositoriesCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
