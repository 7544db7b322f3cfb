package github

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListIssues lists a repository's issues, pull requests included and marked.
// GitHub API docs: https://docs.github.com/rest/issues/issues#list-repository-issues
var ListIssues = &providers.Operation[ListIssuesInput, ListIssuesOutput]{
	Name:  "list_issues",
	Title: "List issues",
	Description: "List the issues of a repository, newest first by default, open ones unless state says otherwise. GitHub " +
		"counts pull requests as issues, so this list includes them: each item has is_pull_request, true for a " +
		"pull request (use list_pull_requests to list only those; skip items with is_pull_request to keep only " +
		"issues). Returns a page of them.",
	DocsURL: "https://docs.github.com/rest/issues/issues#list-repository-issues",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listIssues,
}

// GetIssue reads one issue.
// GitHub API docs: https://docs.github.com/rest/issues/issues#get-an-issue
var GetIssue = &providers.Operation[GetIssueInput, Issue]{
	Name:  "get_issue",
	Title: "Get issue",
	Description: "Read one issue of a repository by its number: title, body, state, labels, assignees, milestone and " +
		"timestamps. A pull request number also works (is_pull_request is then true); use get_pull_request for its " +
		"branches and merge state. Returns the issue; its comments come from list_issue_comments.",
	DocsURL: "https://docs.github.com/rest/issues/issues#get-an-issue",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getIssue,
}

// CreateIssue opens an issue.
// GitHub API docs: https://docs.github.com/rest/issues/issues#create-an-issue
var CreateIssue = &providers.Operation[CreateIssueInput, Issue]{
	Name:  "create_issue",
	Title: "Create issue",
	Description: "Open a new issue in a repository and return it with its number and html_url. labels, assignees and " +
		"milestone take effect only when the token's user has push access to the repository; otherwise GitHub " +
		"silently drops them (check the returned labels and assignees). Labels must already exist in the " +
		"repository. Each call opens another issue: do not call it again to retry unless the first call failed.",
	DocsURL: "https://docs.github.com/rest/issues/issues#create-an-issue",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: false, Destructive: false, Idempotent: false},
	Run:     createIssue,
}

// UpdateIssue changes an issue; only the fields given are sent.
// GitHub API docs: https://docs.github.com/rest/issues/issues#update-an-issue
var UpdateIssue = &providers.Operation[UpdateIssueInput, Issue]{
	Name:  "update_issue",
	Title: "Update issue",
	Description: "Change an issue (or a pull request's title, body, state, labels and assignees) and return it. Only the " +
		"fields given change; omit the others. labels and assignees REPLACE the whole set: to add one, read the " +
		"issue first and send the old ones plus the new; send [] to clear. Give at least one field to change.",
	DocsURL: "https://docs.github.com/rest/issues/issues#update-an-issue",
	Scopes:  []string{"repo"},
	// Sending the same change twice leaves the issue as one call would; but the title,
	// body and the label and assignee sets given overwrite what was there.
	Hints: providers.Hints{ReadOnly: false, Destructive: true, Idempotent: true},
	Run:   updateIssue,
}

// AddIssueComment comments on an issue or pull request.
// GitHub API docs: https://docs.github.com/rest/issues/comments#create-an-issue-comment
var AddIssueComment = &providers.Operation[AddIssueCommentInput, Comment]{
	Name:  "add_issue_comment",
	Title: "Add issue comment",
	Description: "Add a comment, in GitHub Markdown, to an issue or to a pull request's conversation (pass the pull " +
		"request's number as issue_number), and return it with its html_url. Each call adds another comment.",
	DocsURL: "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: false, Destructive: false, Idempotent: false},
	Run:     addIssueComment,
}

// ListIssuesInput is the input of list_issues.
type ListIssuesInput struct {
	Owner     string   `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo      string   `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	State     *string  `json:"state,omitempty" jsonschema:"Which issues to list by state" schema:"enum=open|closed|all,default=open"`
	Labels    []string `json:"labels,omitempty" jsonschema:"Label names; only issues carrying every one of them are listed"`
	Assignee  *string  `json:"assignee,omitempty" jsonschema:"Login of the assignee; none for unassigned issues, * for assigned to anyone" schema:"minLength=1,example=octocat"`
	Sort      *string  `json:"sort,omitempty" jsonschema:"What to sort by" schema:"enum=created|updated|comments,default=created"`
	Direction *string  `json:"direction,omitempty" jsonschema:"Sort direction" schema:"enum=asc|desc,default=desc"`
	Since     *string  `json:"since,omitempty" jsonschema:"Only issues updated at or after this time (e.g. 2024-05-01T00:00:00Z)" schema:"format=date-time,example=2024-05-01T00:00:00Z"`
	providers.PageInput
}

// ListIssuesOutput is one page of issues.
type ListIssuesOutput struct {
	Issues     []Issue `json:"issues" jsonschema:"The issues and pull requests on this page"`
	NextCursor string  `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// GetIssueInput is the input of get_issue.
type GetIssueInput struct {
	Owner       string `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo        string `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	IssueNumber int    `json:"issue_number" jsonschema:"Issue number, as in #1347" schema:"minimum=1,example=1347"`
}

// CreateIssueInput is the input of create_issue.
type CreateIssueInput struct {
	Owner     string   `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo      string   `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	Title     string   `json:"title" jsonschema:"Issue title" schema:"minLength=1,maxLength=256,example=Found a bug"`
	Body      *string  `json:"body,omitempty" jsonschema:"Issue text in GitHub Markdown" schema:"example=Steps to reproduce: run make test"`
	Labels    []string `json:"labels,omitempty" jsonschema:"Names of existing labels to set (needs push access, else dropped)"`
	Assignees []string `json:"assignees,omitempty" jsonschema:"Logins to assign (needs push access, else dropped)" schema:"maxItems=10"`
	Milestone *int     `json:"milestone,omitempty" jsonschema:"Number of the milestone to set (needs push access, else dropped)" schema:"minimum=1,example=1"`
}

// UpdateIssueInput is the input of update_issue; absent fields are left unchanged.
type UpdateIssueInput struct {
	Owner       string    `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo        string    `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	IssueNumber int       `json:"issue_number" jsonschema:"Issue number, as in #1347" schema:"minimum=1,example=1347"`
	Title       *string   `json:"title,omitempty" jsonschema:"New title" schema:"minLength=1,maxLength=256,example=Found a bug"`
	Body        *string   `json:"body,omitempty" jsonschema:"New text in GitHub Markdown; replaces the whole body" schema:"example=Steps to reproduce: run make test"`
	State       *string   `json:"state,omitempty" jsonschema:"open to reopen, closed to close" schema:"enum=open|closed"`
	StateReason *string   `json:"state_reason,omitempty" jsonschema:"Why the state changes; used only with state" schema:"enum=completed|not_planned|reopened"`
	Labels      *[]string `json:"labels,omitempty" jsonschema:"Label names that replace all current labels; [] removes every label"`
	Assignees   *[]string `json:"assignees,omitempty" jsonschema:"Logins that replace all current assignees; [] removes every assignee" schema:"maxItems=10"`
}

// Check refuses an update that changes nothing or gives fields that do not go
// together, before the call is confirmed or sent.
func (in *UpdateIssueInput) Check() error {
	if in.Title == nil && in.Body == nil && in.State == nil && in.StateReason == nil && in.Labels == nil && in.Assignees == nil {
		return switchboard.Invalid("arguments", "give at least one field to change: title, body, state, state_reason, labels or assignees")
	}
	if in.Title != nil && strings.TrimSpace(*in.Title) == "" {
		return switchboard.Invalid("title", "must not be blank")
	}
	if in.StateReason != nil && in.State == nil {
		return switchboard.Invalid("state_reason", "is used only with state: give state too (closed with completed or not_planned, open with reopened)")
	}
	return nil
}

// AddIssueCommentInput is the input of add_issue_comment.
type AddIssueCommentInput struct {
	Owner       string `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo        string `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	IssueNumber int    `json:"issue_number" jsonschema:"Number of the issue or pull request, as in #1347" schema:"minimum=1,example=1347"`
	Body        string `json:"body" jsonschema:"Comment text in GitHub Markdown" schema:"minLength=1,maxLength=65536,example=Steps to reproduce: run make test"`
}

// Issue is an issue (or a pull request seen as an issue).
type Issue struct {
	Number int    `json:"number" jsonschema:"Issue number, as in #123"`
	Title  string `json:"title" jsonschema:"Title"`
	// GitHub's description types an issue's state as a string, "either 'open' or
	// 'closed'", with no enum: the output schema promises no more than it does.
	State         string   `json:"state,omitempty" jsonschema:"open or closed"`
	StateReason   string   `json:"state_reason,omitempty" jsonschema:"Why it is in its state: completed, not_planned, duplicate or reopened"`
	IsPullRequest bool     `json:"is_pull_request" jsonschema:"True when this item is a pull request rather than an issue"`
	Body          string   `json:"body" jsonschema:"Text in GitHub Markdown; empty when none"`
	User          string   `json:"user" jsonschema:"Login of the author"`
	Labels        []string `json:"labels" jsonschema:"Label names"`
	Assignees     []string `json:"assignees" jsonschema:"Logins of the assignees"`
	Milestone     *string  `json:"milestone,omitempty" jsonschema:"Title of the milestone, when there is one"`
	Comments      int      `json:"comments" jsonschema:"Number of comments"`
	Locked        bool     `json:"locked" jsonschema:"True when the conversation is locked"`
	HTMLURL       string   `json:"html_url" jsonschema:"Web page of the issue"`
	CreatedAt     string   `json:"created_at" jsonschema:"When it was opened (RFC 3339)"`
	UpdatedAt     string   `json:"updated_at" jsonschema:"When it last changed (RFC 3339)"`
	ClosedAt      string   `json:"closed_at,omitempty" jsonschema:"When it was closed (RFC 3339); absent while open"`
}

// Comment is a comment on an issue or pull request.
type Comment struct {
	ID        int64  `json:"id" jsonschema:"Comment ID"`
	Body      string `json:"body" jsonschema:"Text in GitHub Markdown"`
	User      string `json:"user" jsonschema:"Login of the author"`
	HTMLURL   string `json:"html_url" jsonschema:"Web page of the comment"`
	CreatedAt string `json:"created_at" jsonschema:"When it was written (RFC 3339)"`
	UpdatedAt string `json:"updated_at" jsonschema:"When it last changed (RFC 3339)"`
}

// ghIssue is the part of GitHub's issue object we read.
type ghIssue struct {
	Number      int          `json:"number"`
	Title       string       `json:"title"`
	State       string       `json:"state"`
	StateReason *string      `json:"state_reason"`
	Body        *string      `json:"body"`
	User        *ghUser      `json:"user"`
	Labels      []ghLabel    `json:"labels"`
	Assignees   []ghUser     `json:"assignees"`
	Milestone   *ghMilestone `json:"milestone"`
	Comments    int          `json:"comments"`
	Locked      bool         `json:"locked"`
	PullRequest *struct{}    `json:"pull_request"`
	HTMLURL     string       `json:"html_url"`
	CreatedAt   string       `json:"created_at"`
	UpdatedAt   string       `json:"updated_at"`
	ClosedAt    *string      `json:"closed_at"`
}

func (i ghIssue) output() Issue {
	return Issue{
		Number: i.Number, Title: i.Title, State: i.State, StateReason: deref(i.StateReason), IsPullRequest: i.PullRequest != nil,
		Body: deref(i.Body), User: login(i.User), Labels: labelNames(i.Labels), Assignees: logins(i.Assignees),
		Milestone: milestoneTitle(i.Milestone), Comments: i.Comments, Locked: i.Locked, HTMLURL: i.HTMLURL,
		CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt, ClosedAt: deref(i.ClosedAt),
	}
}

// ghComment is the part of GitHub's issue-comment object we read.
type ghComment struct {
	ID        int64   `json:"id"`
	Body      *string `json:"body"`
	User      *ghUser `json:"user"`
	HTMLURL   string  `json:"html_url"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
}

func listIssues(ctx context.Context, c *providers.Call, in ListIssuesInput) (ListIssuesOutput, error) {
	p, err := repoPath(in.Owner, in.Repo, "issues")
	if err != nil {
		return ListIssuesOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListIssuesOutput{}, err
	}
	setOpt(q, "state", in.State)
	if len(in.Labels) > 0 {
		for _, l := range in.Labels {
			if l == "" || strings.Contains(l, ",") {
				return ListIssuesOutput{}, switchboard.Invalid("labels", "label names must be non-empty and hold no comma")
			}
		}
		q.Set("labels", strings.Join(in.Labels, ","))
	}
	setOpt(q, "assignee", in.Assignee)
	setOpt(q, "sort", in.Sort)
	setOpt(q, "direction", in.Direction)
	if in.Since != nil {
		if _, err := time.Parse(time.RFC3339, *in.Since); err != nil {
			return ListIssuesOutput{}, switchboard.Invalid("since", "must be an RFC 3339 time such as 2024-05-01T00:00:00Z")
		}
		q.Set("since", *in.Since)
	}
	var res []ghIssue
	h, err := request{method: http.MethodGet, path: p, query: q}.do(ctx, c, &res)
	if err != nil {
		return ListIssuesOutput{}, err
	}
	out := ListIssuesOutput{Issues: make([]Issue, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, i := range res {
		out.Issues = append(out.Issues, i.output())
	}
	return out, nil
}

func getIssue(ctx context.Context, c *providers.Call, in GetIssueInput) (Issue, error) {
	p, err := issuePath(in.Owner, in.Repo, in.IssueNumber)
	if err != nil {
		return Issue{}, err
	}
	var res ghIssue
	if _, err := (request{method: http.MethodGet, path: p}).do(ctx, c, &res); err != nil {
		return Issue{}, err
	}
	return res.output(), nil
}

// createIssueBody is the JSON body of POST /repos/{owner}/{repo}/issues.
type createIssueBody struct {
	Title     string   `json:"title"`
	Body      *string  `json:"body,omitempty"`
	Labels    []string `json:"labels,omitempty"`
	Assignees []string `json:"assignees,omitempty"`
	Milestone *int     `json:"milestone,omitempty"`
}

func createIssue(ctx context.Context, c *providers.Call, in CreateIssueInput) (Issue, error) {
	p, err := repoPath(in.Owner, in.Repo, "issues")
	if err != nil {
		return Issue{}, err
	}
	if strings.TrimSpace(in.Title) == "" {
		return Issue{}, switchboard.Invalid("title", "is required and must not be blank")
	}
	body := createIssueBody{Title: in.Title, Body: in.Body, Labels: in.Labels, Assignees: in.Assignees, Milestone: in.Milestone}
	var res ghIssue
	if _, err := (request{method: http.MethodPost, path: p, body: body}).do(ctx, c, &res); err != nil {
		return Issue{}, err
	}
	return res.output(), nil
}

// updateIssueBody is the JSON body of PATCH /repos/{owner}/{repo}/issues/{issue_number}:
// only the fields given are sent.
type updateIssueBody struct {
	Title       *string   `json:"title,omitempty"`
	Body        *string   `json:"body,omitempty"`
	State       *string   `json:"state,omitempty"`
	StateReason *string   `json:"state_reason,omitempty"`
	Labels      *[]string `json:"labels,omitempty"`
	Assignees   *[]string `json:"assignees,omitempty"`
}

func updateIssue(ctx context.Context, c *providers.Call, in UpdateIssueInput) (Issue, error) {
	p, err := issuePath(in.Owner, in.Repo, in.IssueNumber)
	if err != nil {
		return Issue{}, err
	}
	body := updateIssueBody{Title: in.Title, Body: in.Body, State: in.State, StateReason: in.StateReason, Labels: in.Labels, Assignees: in.Assignees}
	if err := in.Check(); err != nil {
		return Issue{}, err
	}
	// Send [] rather than null for an empty set: null is not a list GitHub takes.
	if body.Labels != nil && *body.Labels == nil {
		body.Labels = &[]string{}
	}
	if body.Assignees != nil && *body.Assignees == nil {
		body.Assignees = &[]string{}
	}
	var res ghIssue
	if _, err := (request{method: http.MethodPatch, path: p, body: body}).do(ctx, c, &res); err != nil {
		return Issue{}, err
	}
	return res.output(), nil
}

func addIssueComment(ctx context.Context, c *providers.Call, in AddIssueCommentInput) (Comment, error) {
	p, err := issuePath(in.Owner, in.Repo, in.IssueNumber, "comments")
	if err != nil {
		return Comment{}, err
	}
	if strings.TrimSpace(in.Body) == "" {
		return Comment{}, switchboard.Invalid("body", "is required and must not be blank")
	}
	var res ghComment
	if _, err := (request{method: http.MethodPost, path: p, body: map[string]string{"body": in.Body}}).do(ctx, c, &res); err != nil {
		return Comment{}, err
	}
	return Comment{ID: res.ID, Body: deref(res.Body), User: login(res.User), HTMLURL: res.HTMLURL, CreatedAt: res.CreatedAt, UpdatedAt: res.UpdatedAt}, nil
}

// issuePath builds /repos/{owner}/{repo}/issues/{issue_number}{/rest…}.
func issuePath(owner, repo string, number int, rest ...string) (string, error) {
	if err := checkNumber("issue_number", number); err != nil {
		return "", err
	}
	return repoPath(owner, repo, append([]string{"issues", strconv.Itoa(number)}, rest...)...)
}

// ListIssueComments lists the comments of an issue or pull request conversation.
// GitHub API docs: https://docs.github.com/rest/issues/comments#list-issue-comments
var ListIssueComments = &providers.Operation[ListIssueCommentsInput, ListIssueCommentsOutput]{
	Name:  "list_issue_comments",
	Title: "List issue comments",
	Description: "List the comments of an issue's or a pull request's conversation, oldest first (the body of the issue " +
		"itself comes from get_issue; comments on lines of a pull request's diff come from " +
		"get_pull_request_comments). Returns a page of them.",
	DocsURL: "https://docs.github.com/rest/issues/comments#list-issue-comments",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listIssueComments,
}

// ListIssueCommentsInput is the input of list_issue_comments.
type ListIssueCommentsInput struct {
	Owner       string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo        string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	IssueNumber int     `json:"issue_number" jsonschema:"Number of the issue or pull request, as in #1347" schema:"minimum=1,example=1347"`
	Since       *string `json:"since,omitempty" jsonschema:"Only comments updated at or after this time, e.g. 2024-05-01T00:00:00Z" schema:"format=date-time,example=2024-05-01T00:00:00Z"`
	providers.PageInput
}

// ListIssueCommentsOutput is one page of comments.
type ListIssueCommentsOutput struct {
	Comments   []Comment `json:"comments" jsonschema:"The comments on this page, oldest first"`
	NextCursor string    `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

func listIssueComments(ctx context.Context, c *providers.Call, in ListIssueCommentsInput) (ListIssueCommentsOutput, error) {
	p, err := issuePath(in.Owner, in.Repo, in.IssueNumber, "comments")
	if err != nil {
		return ListIssueCommentsOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListIssueCommentsOutput{}, err
	}
	if in.Since != nil {
		if _, err := time.Parse(time.RFC3339, *in.Since); err != nil {
			return ListIssueCommentsOutput{}, switchboard.Invalid("since", "must be an RFC 3339 time such as 2024-05-01T00:00:00Z")
		}
		q.Set("since", *in.Since)
	}
	var res []ghComment
	h, err := request{method: http.MethodGet, path: p, query: q}.do(ctx, c, &res)
	if err != nil {
		return ListIssueCommentsOutput{}, err
	}
	out := ListIssueCommentsOutput{Comments: make([]Comment, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, cm := range res {
		out.Comments = append(out.Comments, cm.output())
	}
	return out, nil
}

func (cm ghComment) output() Comment {
	return Comment{ID: cm.ID, Body: deref(cm.Body), User: login(cm.User), HTMLURL: cm.HTMLURL, CreatedAt: cm.CreatedAt, UpdatedAt: cm.UpdatedAt}
}
