package github

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListPullRequests lists a repository's pull requests.
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#list-pull-requests
var ListPullRequests = &providers.Operation[ListPullRequestsInput, ListPullRequestsOutput]{
	Name:  "list_pull_requests",
	Title: "List pull requests",
	Description: "List the pull requests of a repository, open ones unless state says otherwise, newest first by default. " +
		"Items carry branches, draft and merged flags but not mergeability or diff size: call get_pull_request for " +
		"those. Returns a page of them.",
	DocsURL: "https://docs.github.com/rest/pulls/pulls#list-pull-requests",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listPullRequests,
}

// GetPullRequest reads one pull request.
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#get-a-pull-request
var GetPullRequest = &providers.Operation[GetPullRequestInput, PullRequest]{
	Name:  "get_pull_request",
	Title: "Get pull request",
	Description: "Read one pull request by its number: title, body, state, head and base branches with their SHAs, " +
		"draft and merged flags, mergeability, review requests and diff size (commits, additions, deletions, changed " +
		"files). mergeable is absent while GitHub is still computing it; ask again a few seconds later. Returns the pull " +
		"request; its changed files, CI status and reviews come from get_pull_request_files, get_pull_request_status and " +
		"get_pull_request_reviews.",
	DocsURL: "https://docs.github.com/rest/pulls/pulls#get-a-pull-request",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getPullRequest,
}

// CreatePullRequest opens a pull request.
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#create-a-pull-request
var CreatePullRequest = &providers.Operation[CreatePullRequestInput, PullRequest]{
	Name:  "create_pull_request",
	Title: "Create pull request",
	Description: "Open a pull request that asks to merge head into base, and return it with its number and html_url. Both " +
		"branches must already exist and head must have commits base lacks. GitHub refuses a second open pull " +
		"request for the same head and base (invalid, naming the field).",
	DocsURL: "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: false, Destructive: false, Idempotent: false},
	Run:     createPullRequest,
}

// ListPullRequestsInput is the input of list_pull_requests.
type ListPullRequestsInput struct {
	Owner     string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo      string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	State     *string `json:"state,omitempty" jsonschema:"Which pull requests to list by state; merged ones are closed" schema:"enum=open|closed|all,default=open"`
	Head      *string `json:"head,omitempty" jsonschema:"Only pull requests from this branch, as user:branch or org:branch, e.g. octocat:new-topic" schema:"minLength=1,example=octocat:new-topic"`
	Base      *string `json:"base,omitempty" jsonschema:"Only pull requests into this branch, e.g. main" schema:"minLength=1,example=main"`
	Sort      *string `json:"sort,omitempty" jsonschema:"What to sort by; popularity is comment count, long-running is age weighted by activity" schema:"enum=created|updated|popularity|long-running,default=created"`
	Direction *string `json:"direction,omitempty" jsonschema:"Sort direction; desc by default, except asc for sort long-running" schema:"enum=asc|desc"`
	providers.PageInput
}

// ListPullRequestsOutput is one page of pull requests.
type ListPullRequestsOutput struct {
	PullRequests []PullRequest `json:"pull_requests" jsonschema:"The pull requests on this page"`
	NextCursor   string        `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// GetPullRequestInput is the input of get_pull_request.
type GetPullRequestInput struct {
	Owner      string `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo       string `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	PullNumber int    `json:"pull_number" jsonschema:"Pull request number, as in #1347" schema:"minimum=1,example=1347"`
}

// CreatePullRequestInput is the input of create_pull_request.
type CreatePullRequestInput struct {
	Owner               string  `json:"owner" jsonschema:"Account that owns the repository the pull request goes into, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo                string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	Title               string  `json:"title" jsonschema:"Pull request title" schema:"minLength=1,maxLength=256,example=Add retry to the HTTP client"`
	Head                string  `json:"head" jsonschema:"Branch holding the changes: a branch name, or user:branch for a fork" schema:"minLength=1,example=octocat:new-topic"`
	Base                string  `json:"base" jsonschema:"Existing branch of this repository to merge into, e.g. main" schema:"minLength=1,example=main"`
	Body                *string `json:"body,omitempty" jsonschema:"Description in GitHub Markdown; 'Closes #12' links and closes issue 12 on merge" schema:"example=Retries 5xx answers. Closes #12"`
	Draft               *bool   `json:"draft,omitempty" jsonschema:"Open as a draft pull request" schema:"default=false"`
	MaintainerCanModify *bool   `json:"maintainer_can_modify,omitempty" jsonschema:"Let the base repository's maintainers push to head (pull requests from forks)" schema:"default=true"`
}

// PullRequest is a pull request.
type PullRequest struct {
	Number             int      `json:"number" jsonschema:"Pull request number, as in #123"`
	Title              string   `json:"title" jsonschema:"Title"`
	State              string   `json:"state,omitempty" jsonschema:"open or closed (merged pull requests are closed)" schema:"enum=open|closed"`
	Draft              bool     `json:"draft" jsonschema:"True for a draft"`
	Merged             bool     `json:"merged" jsonschema:"True when it has been merged"`
	Body               string   `json:"body" jsonschema:"Description in GitHub Markdown; empty when none"`
	User               string   `json:"user" jsonschema:"Login of the author"`
	Head               Branch   `json:"head" jsonschema:"Branch the changes come from"`
	Base               Branch   `json:"base" jsonschema:"Branch the changes go into"`
	Labels             []string `json:"labels" jsonschema:"Label names"`
	Assignees          []string `json:"assignees" jsonschema:"Logins of the assignees"`
	RequestedReviewers []string `json:"requested_reviewers" jsonschema:"Logins of the people asked to review"`
	Milestone          *string  `json:"milestone,omitempty" jsonschema:"Title of the milestone, when there is one"`
	HTMLURL            string   `json:"html_url" jsonschema:"Web page of the pull request"`
	CreatedAt          string   `json:"created_at" jsonschema:"When it was opened (RFC 3339)"`
	UpdatedAt          string   `json:"updated_at" jsonschema:"When it last changed (RFC 3339)"`
	ClosedAt           string   `json:"closed_at,omitempty" jsonschema:"When it was closed (RFC 3339); absent while open"`
	MergedAt           string   `json:"merged_at,omitempty" jsonschema:"When it was merged (RFC 3339); absent unless merged"`
	Mergeable          *bool    `json:"mergeable,omitempty" jsonschema:"Whether it merges without conflicts; absent in lists and while GitHub computes it"`
	MergeableState     string   `json:"mergeable_state,omitempty" jsonschema:"GitHub's merge state, e.g. clean, dirty (conflicts), blocked, behind, unstable; absent in lists"`
	Comments           *int     `json:"comments,omitempty" jsonschema:"Conversation comments; absent in lists"`
	ReviewComments     *int     `json:"review_comments,omitempty" jsonschema:"Review comments on the diff; absent in lists"`
	Commits            *int     `json:"commits,omitempty" jsonschema:"Number of commits; absent in lists"`
	Additions          *int     `json:"additions,omitempty" jsonschema:"Lines added; absent in lists"`
	Deletions          *int     `json:"deletions,omitempty" jsonschema:"Lines deleted; absent in lists"`
	ChangedFiles       *int     `json:"changed_files,omitempty" jsonschema:"Files changed; absent in lists"`
}

// Branch is one end of a pull request.
type Branch struct {
	Label string `json:"label" jsonschema:"owner:branch, e.g. octocat:new-topic"`
	Ref   string `json:"ref" jsonschema:"Branch name"`
	SHA   string `json:"sha" jsonschema:"Commit SHA the branch pointed at"`
	Repo  string `json:"repo,omitempty" jsonschema:"owner/name of the branch's repository; absent when that repository was deleted"`
}

// ghPullRequest is the part of GitHub's pull-request and pull-request-simple objects we read.
type ghPullRequest struct {
	Number             int          `json:"number"`
	Title              string       `json:"title"`
	State              string       `json:"state"`
	Draft              bool         `json:"draft"`
	Merged             *bool        `json:"merged"`
	Body               *string      `json:"body"`
	User               *ghUser      `json:"user"`
	Head               ghBranch     `json:"head"`
	Base               ghBranch     `json:"base"`
	Labels             []ghLabel    `json:"labels"`
	Assignees          []ghUser     `json:"assignees"`
	RequestedReviewers []ghUser     `json:"requested_reviewers"`
	Milestone          *ghMilestone `json:"milestone"`
	HTMLURL            string       `json:"html_url"`
	CreatedAt          string       `json:"created_at"`
	UpdatedAt          string       `json:"updated_at"`
	ClosedAt           *string      `json:"closed_at"`
	MergedAt           *string      `json:"merged_at"`
	Mergeable          *bool        `json:"mergeable"`
	MergeableState     string       `json:"mergeable_state"`
	Comments           *int         `json:"comments"`
	ReviewComments     *int         `json:"review_comments"`
	Commits            *int         `json:"commits"`
	Additions          *int         `json:"additions"`
	Deletions          *int         `json:"deletions"`
	ChangedFiles       *int         `json:"changed_files"`
}

// ghBranch is a pull request's head or base.
type ghBranch struct {
	Label string `json:"label"`
	Ref   string `json:"ref"`
	SHA   string `json:"sha"`
	Repo  *struct {
		FullName string `json:"full_name"`
	} `json:"repo"`
}

func (b ghBranch) output() Branch {
	out := Branch{Label: b.Label, Ref: b.Ref, SHA: b.SHA}
	if b.Repo != nil {
		out.Repo = b.Repo.FullName
	}
	return out
}

func (p ghPullRequest) output() PullRequest {
	merged := p.MergedAt != nil
	if p.Merged != nil {
		merged = *p.Merged
	}
	return PullRequest{
		Number: p.Number, Title: p.Title, State: p.State, Draft: p.Draft, Merged: merged, Body: deref(p.Body),
		User: login(p.User), Head: p.Head.output(), Base: p.Base.output(), Labels: labelNames(p.Labels),
		Assignees: logins(p.Assignees), RequestedReviewers: logins(p.RequestedReviewers), Milestone: milestoneTitle(p.Milestone),
		HTMLURL: p.HTMLURL, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt, ClosedAt: deref(p.ClosedAt), MergedAt: deref(p.MergedAt),
		Mergeable: p.Mergeable, MergeableState: p.MergeableState, Comments: p.Comments, ReviewComments: p.ReviewComments,
		Commits: p.Commits, Additions: p.Additions, Deletions: p.Deletions, ChangedFiles: p.ChangedFiles,
	}
}

func listPullRequests(ctx context.Context, c *providers.Call, in ListPullRequestsInput) (ListPullRequestsOutput, error) {
	p, err := repoPath(in.Owner, in.Repo, "pulls")
	if err != nil {
		return ListPullRequestsOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListPullRequestsOutput{}, err
	}
	setOpt(q, "state", in.State)
	setOpt(q, "head", in.Head)
	setOpt(q, "base", in.Base)
	setOpt(q, "sort", in.Sort)
	setOpt(q, "direction", in.Direction)
	var res []ghPullRequest
	h, err := request{method: http.MethodGet, path: p, query: q}.do(ctx, c, &res)
	if err != nil {
		return ListPullRequestsOutput{}, err
	}
	out := ListPullRequestsOutput{PullRequests: make([]PullRequest, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, pr := range res {
		out.PullRequests = append(out.PullRequests, pr.output())
	}
	return out, nil
}

func getPullRequest(ctx context.Context, c *providers.Call, in GetPullRequestInput) (PullRequest, error) {
	if err := checkNumber("pull_number", in.PullNumber); err != nil {
		return PullRequest{}, err
	}
	p, err := repoPath(in.Owner, in.Repo, "pulls", strconv.Itoa(in.PullNumber))
	if err != nil {
		return PullRequest{}, err
	}
	var res ghPullRequest
	if _, err := (request{method: http.MethodGet, path: p}).do(ctx, c, &res); err != nil {
		return PullRequest{}, err
	}
	return res.output(), nil
}

// createPullRequestBody is the JSON body of POST /repos/{owner}/{repo}/pulls.
type createPullRequestBody struct {
	Title               string  `json:"title"`
	Head                string  `json:"head"`
	Base                string  `json:"base"`
	Body                *string `json:"body,omitempty"`
	Draft               *bool   `json:"draft,omitempty"`
	MaintainerCanModify *bool   `json:"maintainer_can_modify,omitempty"`
}

func createPullRequest(ctx context.Context, c *providers.Call, in CreatePullRequestInput) (PullRequest, error) {
	p, err := repoPath(in.Owner, in.Repo, "pulls")
	if err != nil {
		return PullRequest{}, err
	}
	switch {
	case strings.TrimSpace(in.Title) == "":
		return PullRequest{}, switchboard.Invalid("title", "is required and must not be blank")
	case strings.TrimSpace(in.Head) == "":
		return PullRequest{}, switchboard.Invalid("head", "is required: the branch holding the changes")
	case strings.TrimSpace(in.Base) == "":
		return PullRequest{}, switchboard.Invalid("base", "is required: the branch to merge into")
	}
	body := createPullRequestBody{Title: in.Title, Head: in.Head, Base: in.Base, Body: in.Body, Draft: in.Draft, MaintainerCanModify: in.MaintainerCanModify}
	var res ghPullRequest
	if _, err := (request{method: http.MethodPost, path: p, body: body}).do(ctx, c, &res); err != nil {
		return PullRequest{}, err
	}
	return res.output(), nil
}
