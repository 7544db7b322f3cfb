package github

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// GetRepository reads one repository.
// GitHub API docs: https://docs.github.com/rest/repos/repos#get-a-repository
var GetRepository = &providers.Operation[RepoInput, Repository]{
	Name:  "get_repository",
	Title: "Get repository",
	Description: "Read one repository's facts: description, visibility, default branch, language, topics, star/fork/open-issue " +
		"counts and when it was last pushed. Use it to learn the default branch before reading files or branching; use " +
		"search_repositories to find repositories by keyword. Returns the repository.",
	DocsURL: "https://docs.github.com/rest/repos/repos#get-a-repository",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getRepository,
}

// CreateRepository creates a repository for the user or in an organization.
// GitHub API docs: https://docs.github.com/rest/repos/repos#create-a-repository-for-the-authenticated-user
var CreateRepository = &providers.Operation[CreateRepositoryInput, Repository]{
	Name:  "create_repository",
	Title: "Create repository",
	Description: "Create a new repository owned by the token's user or an organization it may create repositories in. Set " +
		"auto_init to start with a README commit, which is needed before branches, files via push_files, or pull " +
		"requests can be made. GitHub refuses a name already taken (invalid on name). Returns the new repository " +
		"with its full_name and default_branch.",
	DocsURL: "https://docs.github.com/rest/repos/repos#create-a-repository-for-the-authenticated-user",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{},
	Run:     createRepository,
}

// ForkRepository forks a repository.
// GitHub API docs: https://docs.github.com/rest/repos/forks#create-a-fork
var ForkRepository = &providers.Operation[ForkRepositoryInput, Repository]{
	Name:  "fork_repository",
	Title: "Fork repository",
	Description: "Fork a repository into the token's account or an organization, to propose changes to a repository you " +
		"cannot push to: push to the fork, then create_pull_request with head \"you:branch\". GitHub creates the " +
		"fork in the background (it may take a few seconds before its files can be read). Forking a repository you " +
		"already forked returns the existing fork. Returns the fork.",
	DocsURL: "https://docs.github.com/rest/repos/forks#create-a-fork",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{Idempotent: true},
	Run:     forkRepository,
}

// ListBranches lists a repository's branches.
// GitHub API docs: https://docs.github.com/rest/branches/branches#list-branches
var ListBranches = &providers.Operation[ListBranchesInput, ListBranchesOutput]{
	Name:  "list_branches",
	Title: "List branches",
	Description: "List the branches of a repository with the commit SHA each points at and whether it is protected. Use it " +
		"to find a branch name before get_file_contents, list_commits or create_pull_request. Returns a page of " +
		"them.",
	DocsURL: "https://docs.github.com/rest/branches/branches#list-branches",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listBranches,
}

// CreateBranch creates a branch from another branch's head.
// GitHub API docs: https://docs.github.com/rest/git/refs#create-a-reference
var CreateBranch = &providers.Operation[CreateBranchInput, BranchRef]{
	Name:  "create_branch",
	Title: "Create branch",
	Description: "Create a new branch at the head of from_branch, to commit changes to (create_or_update_file, push_files) " +
		"before opening a pull request. Fails as invalid (\"Reference already exists\") when the branch exists. " +
		"Returns the new branch's ref and commit SHA.",
	DocsURL: "https://docs.github.com/rest/git/refs#create-a-reference",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{},
	Run:     createBranch,
}

// RepoInput names a repository.
type RepoInput struct {
	Owner string `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo  string `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
}

// CreateRepositoryInput is the input of create_repository.
type CreateRepositoryInput struct {
	Name         string  `json:"name" jsonschema:"Name of the new repository, e.g. hello-world" schema:"minLength=1,maxLength=100,example=hello-world"`
	Organization *string `json:"organization,omitempty" jsonschema:"Organization login to create it in; omit to create it in the token user's account, e.g. octo-org" schema:"minLength=1,maxLength=100,example=octo-org"`
	Description  *string `json:"description,omitempty" jsonschema:"Short description shown on the repository page, e.g. A tiny demo" schema:"maxLength=350,example=A tiny demo"`
	Private      *bool   `json:"private,omitempty" jsonschema:"Create it private (visible only to people given access)" schema:"default=false"`
	AutoInit     *bool   `json:"auto_init,omitempty" jsonschema:"Start with a commit holding a README, so branches and pull requests can be made at once" schema:"default=false"`
	Gitignore    *string `json:"gitignore_template,omitempty" jsonschema:"Name of a .gitignore template to add (needs auto_init), e.g. Go" schema:"minLength=1,example=Go"`
	License      *string `json:"license_template,omitempty" jsonschema:"License keyword to add a LICENSE file (needs auto_init), e.g. mit" schema:"minLength=1,example=mit"`
}

// ForkRepositoryInput is the input of fork_repository.
type ForkRepositoryInput struct {
	Owner             string  `json:"owner" jsonschema:"Account that owns the repository to fork, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo              string  `json:"repo" jsonschema:"Repository to fork, without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	Organization      *string `json:"organization,omitempty" jsonschema:"Organization login to fork into; omit to fork into the token user's account, e.g. octo-org" schema:"minLength=1,maxLength=100,example=octo-org"`
	Name              *string `json:"name,omitempty" jsonschema:"Name for the fork; omit to keep the repository's name, e.g. Hello-World-fork" schema:"minLength=1,maxLength=100,example=Hello-World-fork"`
	DefaultBranchOnly *bool   `json:"default_branch_only,omitempty" jsonschema:"Copy only the default branch" schema:"default=false"`
}

// ListBranchesInput is the input of list_branches.
type ListBranchesInput struct {
	Owner     string `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo      string `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	Protected *bool  `json:"protected,omitempty" jsonschema:"true: only protected branches; false: only unprotected ones; omit for all"`
	providers.PageInput
}

// ListBranchesOutput is one page of branches.
type ListBranchesOutput struct {
	Branches   []RepoBranch `json:"branches" jsonschema:"The branches on this page"`
	NextCursor string       `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// RepoBranch is a branch of a repository.
type RepoBranch struct {
	Name      string `json:"name" jsonschema:"Branch name"`
	SHA       string `json:"sha" jsonschema:"SHA of the commit the branch points at"`
	Protected bool   `json:"protected" jsonschema:"True when branch protection rules apply (pushes may need reviews or checks)"`
}

// CreateBranchInput is the input of create_branch.
type CreateBranchInput struct {
	Owner      string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo       string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	Branch     string  `json:"branch" jsonschema:"Name of the branch to create, e.g. fix-typo" schema:"minLength=1,maxLength=255,example=fix-typo"`
	FromBranch *string `json:"from_branch,omitempty" jsonschema:"Branch whose head the new branch starts at; omit for the default branch, e.g. main" schema:"minLength=1,maxLength=255,example=main"`
}

// BranchRef is a branch just created or moved.
type BranchRef struct {
	Ref string `json:"ref" jsonschema:"Full Git reference, e.g. refs/heads/fix-typo"`
	SHA string `json:"sha" jsonschema:"SHA of the commit the branch points at"`
}

// ghRef is GitHub's git-ref object.
type ghRef struct {
	Ref    string `json:"ref"`
	Object struct {
		Type string `json:"type"`
		SHA  string `json:"sha"`
	} `json:"object"`
}

func getRepository(ctx context.Context, c *providers.Call, in RepoInput) (Repository, error) {
	p, err := repoPath(in.Owner, in.Repo)
	if err != nil {
		return Repository{}, err
	}
	var res ghRepository
	if _, err := (request{method: http.MethodGet, path: p}).do(ctx, c, &res); err != nil {
		return Repository{}, err
	}
	return res.output(), nil
}

// createRepositoryBody is the JSON body of POST /user/repos and POST /orgs/{org}/repos.
type createRepositoryBody struct {
	Name        string  `json:"name"`
	Description *string `json:"description,omitempty"`
	Private     *bool   `json:"private,omitempty"`
	AutoInit    *bool   `json:"auto_init,omitempty"`
	Gitignore   *string `json:"gitignore_template,omitempty"`
	License     *string `json:"license_template,omitempty"`
}

func createRepository(ctx context.Context, c *providers.Call, in CreateRepositoryInput) (Repository, error) {
	if err := checkName("name", in.Name); err != nil {
		return Repository{}, err
	}
	p := "/user/repos"
	if in.Organization != nil {
		if err := checkName("organization", *in.Organization); err != nil {
			return Repository{}, err
		}
		p = "/orgs/" + url.PathEscape(*in.Organization) + "/repos"
	}
	body := createRepositoryBody{Name: in.Name, Description: in.Description, Private: in.Private, AutoInit: in.AutoInit, Gitignore: in.Gitignore, License: in.License}
	var res ghRepository
	if _, err := (request{method: http.MethodPost, path: p, body: body}).do(ctx, c, &res); err != nil {
		return Repository{}, err
	}
	return res.output(), nil
}

// forkBody is the JSON body of POST /repos/{owner}/{repo}/forks.
type forkBody struct {
	Organization      *string `json:"organization,omitempty"`
	Name              *string `json:"name,omitempty"`
	DefaultBranchOnly *bool   `json:"default_branch_only,omitempty"`
}

func forkRepository(ctx context.Context, c *providers.Call, in ForkRepositoryInput) (Repository, error) {
	p, err := repoPath(in.Owner, in.Repo, "forks")
	if err != nil {
		return Repository{}, err
	}
	if in.Organization != nil {
		if err := checkName("organization", *in.Organization); err != nil {
			return Repository{}, err
		}
	}
	if in.Name != nil {
		if err := checkName("name", *in.Name); err != nil {
			return Repository{}, err
		}
	}
	var res ghRepository
	body := forkBody{Organization: in.Organization, Name: in.Name, DefaultBranchOnly: in.DefaultBranchOnly}
	if _, err := (request{method: http.MethodPost, path: p, body: body}).do(ctx, c, &res); err != nil {
		return Repository{}, err
	}
	return res.output(), nil
}

// ghBranchItem is GitHub's short-branch object.
type ghBranchItem struct {
	Name   string `json:"name"`
	Commit struct {
		SHA string `json:"sha"`
	} `json:"commit"`
	Protected bool `json:"protected"`
}

func listBranches(ctx context.Context, c *providers.Call, in ListBranchesInput) (ListBranchesOutput, error) {
	p, err := repoPath(in.Owner, in.Repo, "branches")
	if err != nil {
		return ListBranchesOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListBranchesOutput{}, err
	}
	if in.Protected != nil {
		q.Set("protected", boolString(*in.Protected))
	}
	var res []ghBranchItem
	h, err := request{method: http.MethodGet, path: p, query: q}.do(ctx, c, &res)
	if err != nil {
		return ListBranchesOutput{}, err
	}
	out := ListBranchesOutput{Branches: make([]RepoBranch, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, b := range res {
		out.Branches = append(out.Branches, RepoBranch{Name: b.Name, SHA: b.Commit.SHA, Protected: b.Protected})
	}
	return out, nil
}

func createBranch(ctx context.Context, c *providers.Call, in CreateBranchInput) (BranchRef, error) {
	if err := checkBranch("branch", in.Branch); err != nil {
		return BranchRef{}, err
	}
	from := ""
	if in.FromBranch != nil {
		if err := checkBranch("from_branch", *in.FromBranch); err != nil {
			return BranchRef{}, err
		}
		from = *in.FromBranch
	}
	refs, err := repoPath(in.Owner, in.Repo, "git", "refs")
	if err != nil {
		return BranchRef{}, err
	}
	if from == "" {
		repo, err := getRepository(ctx, c, RepoInput{Owner: in.Owner, Repo: in.Repo})
		if err != nil {
			return BranchRef{}, err
		}
		from = repo.DefaultBranch
	}
	head, err := branchHead(ctx, c, in.Owner, in.Repo, from)
	if err != nil {
		return BranchRef{}, err
	}
	var res ghRef
	body := map[string]string{"ref": "refs/heads/" + in.Branch, "sha": head}
	if _, err := (request{method: http.MethodPost, path: refs, body: body}).do(ctx, c, &res); err != nil {
		return BranchRef{}, err
	}
	return BranchRef{Ref: res.Ref, SHA: res.Object.SHA}, nil
}

// branchHead returns the SHA of the commit a branch points at, from GET
// /repos/{owner}/{repo}/git/ref/heads/{branch}.
func branchHead(ctx context.Context, c *providers.Call, owner, repo, branch string) (string, error) {
	p, err := repoPath(owner, repo, append([]string{"git", "ref", "heads"}, strings.Split(branch, "/")...)...)
	if err != nil {
		return "", err
	}
	var ref ghRef
	if _, err := (request{method: http.MethodGet, path: p}).do(ctx, c, &ref); err != nil {
		return "", err
	}
	if ref.Object.SHA == "" {
		return "", &providers.UpstreamError{Provider: providerName, Status: http.StatusOK, Code: switchboard.CodeUpstream,
			Message: "GitHub answered the branch " + branch + " without a commit SHA"}
	}
	return ref.Object.SHA, nil
}

// checkBranch refuses a branch name Git would refuse, or one that could steer the
// request path: empty, with spaces or control characters, "..", a leading or
// trailing slash or dot, or any of ~^:?*[\ .
func checkBranch(field, name string) error {
	bad := name == "" || strings.Contains(name, "..") || strings.Contains(name, "//") || strings.HasPrefix(name, "/") ||
		strings.HasSuffix(name, "/") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".lock") ||
		strings.ContainsAny(name, "~^:?*[\\%#") || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f })
	if bad {
		return switchboard.Invalid(field, "is not a valid branch name: use letters, digits, '-', '_', '.' and '/' (no spaces, '..', or leading/trailing '/'), e.g. fix-typo")
	}
	return nil
}

// boolString renders a boolean query parameter.
func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
