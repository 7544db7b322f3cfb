package github

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// SearchRepositories finds repositories with GitHub's search syntax.
// GitHub API docs: https://docs.github.com/rest/search/search#search-repositories
var SearchRepositories = &providers.Operation[SearchRepositoriesInput, SearchRepositoriesOutput]{
	Name:  "search_repositories",
	Title: "Search repositories",
	Description: "Search GitHub repositories with GitHub's search syntax and return the matches, best first unless sort is " +
		"given. q combines keywords and qualifiers, e.g. \"switchboard language:go stars:>100\", \"org:octo-org " +
		"topic:cli\", \"user:octocat in:name hello\", \"is:private\" (private results need a token with access). " +
		"Results are capped by GitHub at 1,000 per query; refine q rather than paging far. Returns total_count.",
	DocsURL: "https://docs.github.com/rest/search/search#search-repositories",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     searchRepositories,
}

// SearchRepositoriesInput is the input of search_repositories.
type SearchRepositoriesInput struct {
	Query string  `json:"q" jsonschema:"Search keywords and qualifiers in GitHub search syntax, e.g. 'http router language:go stars:>500'" schema:"minLength=1,maxLength=256,example=http router language:go stars:>500"`
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

// SearchCode finds files by their content with GitHub's code search syntax.
// GitHub API docs: https://docs.github.com/rest/search/search#search-code
var SearchCode = &providers.Operation[SearchCodeInput, SearchCodeOutput]{
	Name:  "search_code",
	Title: "Search code",
	Description: "Find files whose content or path matches a query, on the default branches of repositories the token can " +
		"see. q combines keywords and qualifiers and should name where to look, e.g. \"NewRouter " +
		"repo:gin-gonic/gin\", \"TODO language:go org:octo-org\", \"filename:Dockerfile user:octocat\", " +
		"\"path:docs install\". Then read a hit with get_file_contents (owner, repo and path are given). GitHub " +
		"limits code search to 10 requests a minute. Returns total_count and the matching files.",
	DocsURL: "https://docs.github.com/rest/search/search#search-code",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     searchCode,
}

// SearchIssues finds issues and pull requests across repositories.
// GitHub API docs: https://docs.github.com/rest/search/search#search-issues-and-pull-requests
var SearchIssues = &providers.Operation[SearchIssuesInput, SearchIssuesOutput]{
	Name:  "search_issues",
	Title: "Search issues and pull requests",
	Description: "Find issues and pull requests across all repositories the token can see, with GitHub's search syntax. q " +
		"must say is:issue or is:pr (GitHub requires one), plus keywords and qualifiers, e.g. \"is:pr " +
		"author:octocat review:required\", \"is:issue assignee:@me state:open\". Use list_issues to page through " +
		"one repository without a query. Returns total_count and the matches, each with its repository.",
	DocsURL: "https://docs.github.com/rest/search/search#search-issues-and-pull-requests",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     searchIssues,
}

// SearchUsers finds users and organizations.
// GitHub API docs: https://docs.github.com/rest/search/search#search-users
var SearchUsers = &providers.Operation[SearchUsersInput, SearchUsersOutput]{
	Name:  "search_users",
	Title: "Search users",
	Description: "Find GitHub users and organizations by login, name, email or profile facts, e.g. \"tom repos:>42 " +
		"followers:>1000\", \"location:Berlin language:go\", \"type:org cloud\". Use it to find the login to pass " +
		"as an assignee, reviewer or owner. Returns total_count and the accounts (login, type, html_url).",
	DocsURL: "https://docs.github.com/rest/search/search#search-users",
	// No scope: any token reads the public profile (read:user adds private facts), so
	// a connection without read:user is not asked to grant it.
	Hints: providers.Hints{ReadOnly: true, Idempotent: true},
	Run:   searchUsers,
}

// SearchCodeInput is the input of search_code.
type SearchCodeInput struct {
	Query string `json:"q" jsonschema:"Search keywords and qualifiers in GitHub code search syntax, e.g. 'addClass repo:jquery/jquery'" schema:"minLength=1,maxLength=256,example=addClass repo:jquery/jquery"`
	providers.PageInput
}

// SearchCodeOutput is one page of matching files.
type SearchCodeOutput struct {
	TotalCount        int       `json:"total_count" jsonschema:"Number of files matching the query, across all pages"`
	IncompleteResults bool      `json:"incomplete_results" jsonschema:"True when GitHub's search timed out and the results may be partial"`
	Items             []CodeHit `json:"items" jsonschema:"The files on this page"`
	NextCursor        string    `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// CodeHit is one file found by search_code.
type CodeHit struct {
	Owner   string `json:"owner" jsonschema:"Owner of the repository holding the file"`
	Repo    string `json:"repo" jsonschema:"Repository holding the file, without the owner"`
	Path    string `json:"path" jsonschema:"Path of the file; pass owner, repo and path to get_file_contents to read it"`
	Name    string `json:"name" jsonschema:"File name"`
	SHA     string `json:"sha" jsonschema:"Blob SHA of the file"`
	HTMLURL string `json:"html_url" jsonschema:"Web page of the file"`
}

// SearchIssuesInput is the input of search_issues.
type SearchIssuesInput struct {
	Query string  `json:"q" jsonschema:"Search keywords and qualifiers, with is:issue or is:pr, e.g. 'is:issue is:open repo:octocat/Hello-World label:bug'" schema:"minLength=1,maxLength=256,example=is:issue is:open repo:octocat/Hello-World label:bug"`
	Sort  *string `json:"sort,omitempty" jsonschema:"Sort by comments, reactions, interactions, created or updated; omit for best match" schema:"enum=comments|reactions|interactions|created|updated"`
	Order *string `json:"order,omitempty" jsonschema:"Sort direction, only used with sort" schema:"enum=desc|asc,default=desc"`
	providers.PageInput
}

// SearchIssuesOutput is one page of matching issues and pull requests.
type SearchIssuesOutput struct {
	TotalCount        int           `json:"total_count" jsonschema:"Number of matches across all pages"`
	IncompleteResults bool          `json:"incomplete_results" jsonschema:"True when GitHub's search timed out and the results may be partial"`
	Items             []IssueInRepo `json:"items" jsonschema:"The issues and pull requests on this page"`
	NextCursor        string        `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// IssueInRepo is an issue or pull request with the repository it belongs to.
type IssueInRepo struct {
	Repository string `json:"repository" jsonschema:"owner/name of the repository it belongs to"`
	Issue
}

// SearchUsersInput is the input of search_users.
type SearchUsersInput struct {
	Query string  `json:"q" jsonschema:"Search keywords and qualifiers, e.g. 'tom repos:>42 followers:>1000'" schema:"minLength=1,maxLength=256,example=tom repos:>42 followers:>1000"`
	Sort  *string `json:"sort,omitempty" jsonschema:"Sort by followers, repositories or joined; omit for best match" schema:"enum=followers|repositories|joined"`
	Order *string `json:"order,omitempty" jsonschema:"Sort direction, only used with sort" schema:"enum=desc|asc,default=desc"`
	providers.PageInput
}

// SearchUsersOutput is one page of matching accounts.
type SearchUsersOutput struct {
	TotalCount        int       `json:"total_count" jsonschema:"Number of matches across all pages"`
	IncompleteResults bool      `json:"incomplete_results" jsonschema:"True when GitHub's search timed out and the results may be partial"`
	Items             []Account `json:"items" jsonschema:"The users and organizations on this page"`
	NextCursor        string    `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// Account is a GitHub user or organization in a list.
type Account struct {
	Login   string `json:"login" jsonschema:"Login, e.g. octocat"`
	ID      int64  `json:"id" jsonschema:"Numeric account ID"`
	Type    string `json:"type" jsonschema:"User, Organization or Bot"`
	HTMLURL string `json:"html_url" jsonschema:"Profile page"`
}

// searchQuery starts a search's query: the page, per_page, q, sort and order.
func searchQuery(in providers.PageInput, query string, sort, order *string) (url.Values, error) {
	if strings.TrimSpace(query) == "" {
		return nil, switchboard.Invalid("q", "is required: give keywords or qualifiers to search for")
	}
	q, err := pageQuery(in)
	if err != nil {
		return nil, err
	}
	q.Set("q", query)
	setOpt(q, "sort", sort)
	setOpt(q, "order", order)
	return q, nil
}

func searchCode(ctx context.Context, c *providers.Call, in SearchCodeInput) (SearchCodeOutput, error) {
	q, err := searchQuery(in.PageInput, in.Query, nil, nil)
	if err != nil {
		return SearchCodeOutput{}, err
	}
	var res struct {
		TotalCount        int  `json:"total_count"`
		IncompleteResults bool `json:"incomplete_results"`
		Items             []struct {
			Name       string       `json:"name"`
			Path       string       `json:"path"`
			SHA        string       `json:"sha"`
			HTMLURL    string       `json:"html_url"`
			Repository ghRepository `json:"repository"`
		} `json:"items"`
	}
	h, err := request{method: http.MethodGet, path: "/search/code", query: q}.do(ctx, c, &res)
	if err != nil {
		return SearchCodeOutput{}, err
	}
	out := SearchCodeOutput{TotalCount: res.TotalCount, IncompleteResults: res.IncompleteResults, Items: make([]CodeHit, 0, len(res.Items)), NextCursor: nextCursor(h, q)}
	for _, it := range res.Items {
		out.Items = append(out.Items, CodeHit{Owner: login(it.Repository.Owner), Repo: it.Repository.Name, Path: it.Path, Name: it.Name, SHA: it.SHA, HTMLURL: it.HTMLURL})
	}
	return out, nil
}

func searchIssues(ctx context.Context, c *providers.Call, in SearchIssuesInput) (SearchIssuesOutput, error) {
	q, err := searchQuery(in.PageInput, in.Query, in.Sort, in.Order)
	if err != nil {
		return SearchIssuesOutput{}, err
	}
	var res struct {
		TotalCount        int  `json:"total_count"`
		IncompleteResults bool `json:"incomplete_results"`
		Items             []struct {
			ghIssue
			RepositoryURL string `json:"repository_url"`
		} `json:"items"`
	}
	h, err := request{method: http.MethodGet, path: "/search/issues", query: q}.do(ctx, c, &res)
	if err != nil {
		return SearchIssuesOutput{}, err
	}
	out := SearchIssuesOutput{TotalCount: res.TotalCount, IncompleteResults: res.IncompleteResults, Items: make([]IssueInRepo, 0, len(res.Items)), NextCursor: nextCursor(h, q)}
	for _, it := range res.Items {
		out.Items = append(out.Items, IssueInRepo{Repository: repoFromURL(it.RepositoryURL), Issue: it.output()})
	}
	return out, nil
}

func searchUsers(ctx context.Context, c *providers.Call, in SearchUsersInput) (SearchUsersOutput, error) {
	q, err := searchQuery(in.PageInput, in.Query, in.Sort, in.Order)
	if err != nil {
		return SearchUsersOutput{}, err
	}
	var res struct {
		TotalCount        int         `json:"total_count"`
		IncompleteResults bool        `json:"incomplete_results"`
		Items             []ghAccount `json:"items"`
	}
	h, err := request{method: http.MethodGet, path: "/search/users", query: q}.do(ctx, c, &res)
	if err != nil {
		return SearchUsersOutput{}, err
	}
	out := SearchUsersOutput{TotalCount: res.TotalCount, IncompleteResults: res.IncompleteResults, Items: make([]Account, 0, len(res.Items)), NextCursor: nextCursor(h, q)}
	for _, u := range res.Items {
		out.Items = append(out.Items, u.output())
	}
	return out, nil
}

// ghAccount is the part of a user or organization item we read.
type ghAccount struct {
	Login   string `json:"login"`
	ID      int64  `json:"id"`
	Type    string `json:"type"`
	HTMLURL string `json:"html_url"`
}

func (a ghAccount) output() Account {
	return Account{Login: a.Login, ID: a.ID, Type: a.Type, HTMLURL: a.HTMLURL}
}

// repoFromURL returns "owner/name" from a repository API URL
// (https://api.github.com/repos/owner/name, or …/api/v3/repos/owner/name).
func repoFromURL(u string) string {
	i := strings.LastIndex(u, "/repos/")
	if i < 0 {
		return ""
	}
	return u[i+len("/repos/"):]
}
