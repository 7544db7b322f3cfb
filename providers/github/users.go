package github

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboard-hub/switchboard/providers"
)

// GetMe reads the account the connection's token belongs to.
// GitHub API docs: https://docs.github.com/rest/users/users#get-the-authenticated-user
var GetMe = &providers.Operation[struct{}, Me]{
	Name:  "get_me",
	Title: "Get my GitHub user",
	Description: "Read the GitHub account this connection acts as: login, name, profile facts and repository counts. Call " +
		"it first to learn which login means \"me\" (for assignee, author or user: qualifiers) and whose repositories " +
		"create_repository and fork_repository create. Returns the account.",
	DocsURL: "https://docs.github.com/rest/users/users#get-the-authenticated-user",
	// No scope: any token reads the public profile (read:user adds private facts), so
	// a connection without read:user is not asked to grant it.
	Hints: providers.Hints{ReadOnly: true, Idempotent: true},
	Run:   getMe,
}

// ListMyOrgs lists the organizations the authenticated user belongs to.
// GitHub API docs: https://docs.github.com/rest/orgs/orgs#list-organizations-for-the-authenticated-user
var ListMyOrgs = &providers.Operation[ListMyOrgsInput, ListOrgsOutput]{
	Name:  "list_my_orgs",
	Title: "List my organizations",
	Description: "List the organizations the token user belongs to (login and description), e.g. to choose where to " +
		"create_repository or which org to pass to list_org_repos. Organizations that restrict OAuth apps or " +
		"tokens may be missing. Returns a page of them.",
	DocsURL: "https://docs.github.com/rest/orgs/orgs#list-organizations-for-the-authenticated-user",
	Scopes:  []string{"read:org"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listMyOrgs,
}

// GetOrg reads an organization's profile.
// GitHub API docs: https://docs.github.com/rest/orgs/orgs#get-an-organization
var GetOrg = &providers.Operation[OrgInput, Organization]{
	Name:  "get_org",
	Title: "Get organization",
	Description: "Read an organization's public profile: name, description, blog, location, email and public repository " +
		"count. Returns the organization.",
	DocsURL: "https://docs.github.com/rest/orgs/orgs#get-an-organization",
	Scopes:  []string{"read:org"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getOrg,
}

// ListOrgRepos lists an organization's repositories.
// GitHub API docs: https://docs.github.com/rest/repos/repos#list-organization-repositories
var ListOrgRepos = &providers.Operation[ListOrgReposInput, ListOrgReposOutput]{
	Name:  "list_org_repos",
	Title: "List organization repositories",
	Description: "List the repositories of an organization that the token can see (private ones need membership). Use " +
		"search_repositories with \"org:NAME\" to filter by keyword or language instead. Returns a page of them.",
	DocsURL: "https://docs.github.com/rest/repos/repos#list-organization-repositories",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listOrgRepos,
}

// Me is the authenticated user.
type Me struct {
	Login        string `json:"login" jsonschema:"Login, e.g. octocat"`
	ID           int64  `json:"id" jsonschema:"Numeric account ID"`
	Name         string `json:"name" jsonschema:"Display name; empty when not set"`
	Email        string `json:"email,omitempty" jsonschema:"Public email; absent when not public"`
	Company      string `json:"company,omitempty" jsonschema:"Company from the profile"`
	Location     string `json:"location,omitempty" jsonschema:"Location from the profile"`
	Bio          string `json:"bio,omitempty" jsonschema:"Profile text"`
	HTMLURL      string `json:"html_url" jsonschema:"Profile page"`
	PublicRepos  int    `json:"public_repos" jsonschema:"Number of public repositories"`
	PrivateRepos *int   `json:"private_repos,omitempty" jsonschema:"Number of private repositories owned; absent when the token may not see it"`
	CreatedAt    string `json:"created_at" jsonschema:"When the account was created (RFC 3339)"`
}

// ListMyOrgsInput is the input of list_my_orgs.
type ListMyOrgsInput struct {
	providers.PageInput
}

// ListOrgsOutput is one page of organizations.
type ListOrgsOutput struct {
	Organizations []OrgBrief `json:"organizations" jsonschema:"The organizations on this page"`
	NextCursor    string     `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// OrgBrief is an organization in a list.
type OrgBrief struct {
	Login       string `json:"login" jsonschema:"Organization login, as get_org and list_org_repos take it"`
	ID          int64  `json:"id" jsonschema:"Numeric organization ID"`
	Description string `json:"description" jsonschema:"Description; empty when none"`
}

// OrgInput names an organization.
type OrgInput struct {
	Org string `json:"org" jsonschema:"Organization login, e.g. github" schema:"minLength=1,maxLength=100,example=github"`
}

// Organization is an organization's profile.
type Organization struct {
	Login       string `json:"login" jsonschema:"Organization login"`
	ID          int64  `json:"id" jsonschema:"Numeric organization ID"`
	Name        string `json:"name" jsonschema:"Display name; empty when not set"`
	Description string `json:"description" jsonschema:"Description; empty when none"`
	Blog        string `json:"blog,omitempty" jsonschema:"Website"`
	Location    string `json:"location,omitempty" jsonschema:"Location"`
	Email       string `json:"email,omitempty" jsonschema:"Public email"`
	PublicRepos int    `json:"public_repos" jsonschema:"Number of public repositories"`
	HTMLURL     string `json:"html_url" jsonschema:"Profile page"`
	CreatedAt   string `json:"created_at" jsonschema:"When it was created (RFC 3339)"`
}

// ListOrgReposInput is the input of list_org_repos.
type ListOrgReposInput struct {
	Org       string  `json:"org" jsonschema:"Organization login, e.g. github" schema:"minLength=1,maxLength=100,example=github"`
	Type      *string `json:"type,omitempty" jsonschema:"Which repositories: all, public, private, forks, sources (not forks) or member" schema:"enum=all|public|private|forks|sources|member,default=all"`
	Sort      *string `json:"sort,omitempty" jsonschema:"What to sort by" schema:"enum=created|updated|pushed|full_name,default=created"`
	Direction *string `json:"direction,omitempty" jsonschema:"Sort direction; asc for full_name, desc otherwise by default" schema:"enum=asc|desc"`
	providers.PageInput
}

// ListOrgReposOutput is one page of repositories.
type ListOrgReposOutput struct {
	Repositories []Repository `json:"repositories" jsonschema:"The repositories on this page"`
	NextCursor   string       `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

func getMe(ctx context.Context, c *providers.Call, _ struct{}) (Me, error) {
	var res struct {
		Login             string  `json:"login"`
		ID                int64   `json:"id"`
		Name              *string `json:"name"`
		Email             *string `json:"email"`
		Company           *string `json:"company"`
		Location          *string `json:"location"`
		Bio               *string `json:"bio"`
		HTMLURL           string  `json:"html_url"`
		PublicRepos       int     `json:"public_repos"`
		OwnedPrivateRepos *int    `json:"owned_private_repos"`
		CreatedAt         string  `json:"created_at"`
	}
	if _, err := (request{method: http.MethodGet, path: "/user"}).do(ctx, c, &res); err != nil {
		return Me{}, err
	}
	return Me{Login: res.Login, ID: res.ID, Name: deref(res.Name), Email: deref(res.Email), Company: deref(res.Company),
		Location: deref(res.Location), Bio: deref(res.Bio), HTMLURL: res.HTMLURL, PublicRepos: res.PublicRepos,
		PrivateRepos: res.OwnedPrivateRepos, CreatedAt: res.CreatedAt}, nil
}

func listMyOrgs(ctx context.Context, c *providers.Call, in ListMyOrgsInput) (ListOrgsOutput, error) {
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListOrgsOutput{}, err
	}
	var res []struct {
		Login       string  `json:"login"`
		ID          int64   `json:"id"`
		Description *string `json:"description"`
	}
	h, err := request{method: http.MethodGet, path: "/user/orgs", query: q}.do(ctx, c, &res)
	if err != nil {
		return ListOrgsOutput{}, err
	}
	out := ListOrgsOutput{Organizations: make([]OrgBrief, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, o := range res {
		out.Organizations = append(out.Organizations, OrgBrief{Login: o.Login, ID: o.ID, Description: deref(o.Description)})
	}
	return out, nil
}

func getOrg(ctx context.Context, c *providers.Call, in OrgInput) (Organization, error) {
	if err := checkName("org", in.Org); err != nil {
		return Organization{}, err
	}
	var res struct {
		Login       string  `json:"login"`
		ID          int64   `json:"id"`
		Name        *string `json:"name"`
		Description *string `json:"description"`
		Blog        *string `json:"blog"`
		Location    *string `json:"location"`
		Email       *string `json:"email"`
		PublicRepos int     `json:"public_repos"`
		HTMLURL     string  `json:"html_url"`
		CreatedAt   string  `json:"created_at"`
	}
	if _, err := (request{method: http.MethodGet, path: "/orgs/" + url.PathEscape(in.Org)}).do(ctx, c, &res); err != nil {
		return Organization{}, err
	}
	return Organization{Login: res.Login, ID: res.ID, Name: deref(res.Name), Description: deref(res.Description), Blog: deref(res.Blog),
		Location: deref(res.Location), Email: deref(res.Email), PublicRepos: res.PublicRepos, HTMLURL: res.HTMLURL, CreatedAt: res.CreatedAt}, nil
}

func listOrgRepos(ctx context.Context, c *providers.Call, in ListOrgReposInput) (ListOrgReposOutput, error) {
	if err := checkName("org", in.Org); err != nil {
		return ListOrgReposOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListOrgReposOutput{}, err
	}
	setOpt(q, "type", in.Type)
	setOpt(q, "sort", in.Sort)
	setOpt(q, "direction", in.Direction)
	var res []ghRepository
	h, err := request{method: http.MethodGet, path: "/orgs/" + url.PathEscape(in.Org) + "/repos", query: q}.do(ctx, c, &res)
	if err != nil {
		return ListOrgReposOutput{}, err
	}
	out := ListOrgReposOutput{Repositories: make([]Repository, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, r := range res {
		out.Repositories = append(out.Repositories, r.output())
	}
	return out, nil
}
