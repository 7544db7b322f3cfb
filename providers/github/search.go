package github

import (
	"context"
	"net/http"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// SearchRepositories finds repositories with GitHub's search syntax.
// GitHub API docs: https://docs.github.com/rest/search/search#search-repositories
var SearchRepositories = &providers.Operation[SearchRepositoriesInput, SearchRepositoriesOutput]{
	Name:  "search_repositories",
	Title: "Search repositories",
	Description: "Search GitHub repositories with GitHub's search syntax and return the matches, best first unless sort is given. " +
		"q combines keywords and qualifiers, e.g. \"switchboard language:go stars:>100\", \"org:octo-org topic:cli\", " +
		"\"user:octocat in:name hello\", \"is:private\" (private results need a token with access). " +
		"Results are capped by GitHub at 1,000 per query; refine q rather than paging far. " +
		"Returns total_count and next_cursor when more pages exist: pass it back as cursor with the same q; later pages keep " +
		"the first page's size.",
	DocsURL: "https://docs.github.com/rest/search/search#search-repositories",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     searchRepositories,
}

// SearchRepositoriesInput is the input of search_repositories.
type SearchRepositoriesInput struct {
	Query string  `json:"q" jsonschema:"Search keywords and qualifiers in GitHub search syntax, e.g. 'http router language:go stars:>500'" schema:"minLength=1,maxLength=256"`
	Sort  *string `json:"sort,omitempty" jsonschema:"Sort by stars, forks, help-wanted-issues or updated; omit for best match" schema:"enum=stars|forks|help-wanted-issues|updated"`
	Order *string `json:"order,omitempty" jsonschema:"Sort direction, only used with sort" schema:"enum=desc|asc,default=desc"`
	providers.PageInput
}

// SearchRepositoriesOutput is one page of matching repositories.
type SearchRepositoriesOutput struct {
	TotalCount        int          `json:"total_count" jsonschema:"Number of repositories matching the query, across all pages"`
	IncompleteResults bool         `json:"incomplete_results" jsonschema:"True when GitHub's search timed out and the results may be partial"`
	Items             []Repository `json:"items" jsonschema:"The repositories on this page"`
	NextCursor        string       `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// Repository is a repository as search and listings return it.
type Repository struct {
	FullName        string   `json:"full_name" jsonschema:"owner/name, e.g. octocat/Hello-World"`
	Owner           string   `json:"owner" jsonschema:"Login of the owning user or organization"`
	Name            string   `json:"name" jsonschema:"Repository name without the owner"`
	Description     string   `json:"description" jsonschema:"Repository description; empty when none"`
	HTMLURL         string   `json:"html_url" jsonschema:"Web page of the repository"`
	Private         bool     `json:"private" jsonschema:"True for a private or internal repository"`
	Fork            bool     `json:"fork" jsonschema:"True when the repository is a fork"`
	Archived        bool     `json:"archived" jsonschema:"True when the repository is archived (read-only)"`
	Language        string   `json:"language" jsonschema:"Main language; empty when GitHub detected none"`
	Topics          []string `json:"topics" jsonschema:"Topics of the repository"`
	StargazersCount int      `json:"stargazers_count" jsonschema:"Number of stars"`
	ForksCount      int      `json:"forks_count" jsonschema:"Number of forks"`
	OpenIssuesCount int      `json:"open_issues_count" jsonschema:"Open issues and pull requests"`
	DefaultBranch   string   `json:"default_branch" jsonschema:"Default branch, e.g. main"`
	UpdatedAt       string   `json:"updated_at" jsonschema:"When the repository was last updated (RFC 3339)"`
	PushedAt        string   `json:"pushed_at,omitempty" jsonschema:"When the repository was last pushed to (RFC 3339)"`
}

// ghRepository is the part of GitHub's repo-search-result-item we read.
type ghRepository struct {
	FullName        string   `json:"full_name"`
	Name            string   `json:"name"`
	Owner           *ghUser  `json:"owner"`
	Description     *string  `json:"description"`
	HTMLURL         string   `json:"html_url"`
	Private         bool     `json:"private"`
	Fork            bool     `json:"fork"`
	Archived        bool     `json:"archived"`
	Language        *string  `json:"language"`
	Topics          []string `json:"topics"`
	StargazersCount int      `json:"stargazers_count"`
	ForksCount      int      `json:"forks_count"`
	OpenIssuesCount int      `json:"open_issues_count"`
	DefaultBranch   string   `json:"default_branch"`
	UpdatedAt       string   `json:"updated_at"`
	PushedAt        *string  `json:"pushed_at"`
}

func (r ghRepository) output() Repository {
	topics := r.Topics
	if topics == nil {
		topics = []string{}
	}
	return Repository{
		FullName: r.FullName, Owner: login(r.Owner), Name: r.Name, Description: deref(r.Description),
		HTMLURL: r.HTMLURL, Private: r.Private, Fork: r.Fork, Archived: r.Archived, Language: deref(r.Language),
		Topics: topics, StargazersCount: r.StargazersCount, ForksCount: r.ForksCount, OpenIssuesCount: r.OpenIssuesCount,
		DefaultBranch: r.DefaultBranch, UpdatedAt: r.UpdatedAt, PushedAt: deref(r.PushedAt),
	}
}

func searchRepositories(ctx context.Context, c *providers.Call, in SearchRepositoriesInput) (SearchRepositoriesOutput, error) {
	if in.Query == "" {
		return SearchRepositoriesOutput{}, switchboard.Invalid("q", "is required: give keywords or qualifiers to search for")
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return SearchRepositoriesOutput{}, err
	}
	q.Set("q", in.Query)
	setOpt(q, "sort", in.Sort)
	setOpt(q, "order", in.Order)
	var res struct {
		TotalCount        int            `json:"total_count"`
		IncompleteResults bool           `json:"incomplete_results"`
		Items             []ghRepository `json:"items"`
	}
	h, err := request{method: http.MethodGet, path: "/search/repositories", query: q}.do(ctx, c, &res)
	if err != nil {
		return SearchRepositoriesOutput{}, err
	}
	out := SearchRepositoriesOutput{TotalCount: res.TotalCount, IncompleteResults: res.IncompleteResults, Items: make([]Repository, 0, len(res.Items)), NextCursor: nextCursor(h, q)}
	for _, r := range res.Items {
		out.Items = append(out.Items, r.output())
	}
	return out, nil
}
