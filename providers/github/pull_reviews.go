package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// GetPullRequestFiles lists the files a pull request changes.
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#list-pull-requests-files
var GetPullRequestFiles = &providers.Operation[PullPageInput, PullFilesOutput]{
	Name:  "get_pull_request_files",
	Title: "Get pull request files",
	Description: "List the files a pull request changes, with each file's status (added, modified, removed, renamed), line " +
		"counts and unified diff (patch; absent for binary or very large diffs). Use it to review a pull request's " +
		"changes; GitHub lists at most 3,000 files. Returns a page of them.",
	DocsURL: "https://docs.github.com/rest/pulls/pulls#list-pull-requests-files",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getPullRequestFiles,
}

// GetPullRequestStatus combines the commit statuses and check runs of a pull request's head.
// GitHub API docs: https://docs.github.com/rest/commits/statuses#get-the-combined-status-for-a-specific-reference
var GetPullRequestStatus = &providers.Operation[PullInput, PullStatus]{
	Name:  "get_pull_request_status",
	Title: "Get pull request status",
	Description: "Tell whether a pull request's CI passes: reads the pull request's head commit, then both kinds of checks " +
		"GitHub shows on it, commit statuses (e.g. external CI) and check runs (e.g. GitHub Actions). state sums them up: " +
		"success (all passed), failure (one failed, errored, timed out or was cancelled), pending (one still running) or " +
		"none (no checks). Returns state, the head SHA and each status and check run (the first 100 of each) with its " +
		"link, for a follow-up with list_workflow_runs.",
	DocsURL: "https://docs.github.com/rest/commits/statuses#get-the-combined-status-for-a-specific-reference",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getPullRequestStatus,
}

// GetPullRequestComments lists the review comments on a pull request's diff.
// GitHub API docs: https://docs.github.com/rest/pulls/comments#list-review-comments-on-a-pull-request
var GetPullRequestComments = &providers.Operation[PullCommentsInput, PullCommentsOutput]{
	Name:  "get_pull_request_comments",
	Title: "Get pull request review comments",
	Description: "List the review comments written on lines of a pull request's diff, oldest first: file, line, text, " +
		"author and the reply chain (in_reply_to_id). Comments on the conversation tab are issue comments, not " +
		"listed here: read them with list_issue_comments. Returns a page of them.",
	DocsURL: "https://docs.github.com/rest/pulls/comments#list-review-comments-on-a-pull-request",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getPullRequestComments,
}

// GetPullRequestReviews lists the reviews of a pull request.
// GitHub API docs: https://docs.github.com/rest/pulls/reviews#list-reviews-for-a-pull-request
var GetPullRequestReviews = &providers.Operation[PullPageInput, PullReviewsOutput]{
	Name:  "get_pull_request_reviews",
	Title: "Get pull request reviews",
	Description: "List the reviews submitted on a pull request, oldest first: reviewer, verdict (APPROVED, " +
		"CHANGES_REQUESTED, COMMENTED, DISMISSED) and summary text. Use it to see whether a pull request is " +
		"approved before merge_pull_request. Returns a page of them.",
	DocsURL: "https://docs.github.com/rest/pulls/reviews#list-reviews-for-a-pull-request",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getPullRequestReviews,
}

// CreatePullRequestReview submits a review.
// GitHub API docs: https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request
var CreatePullRequestReview = &providers.Operation[CreateReviewInput, Review]{
	Name:  "create_pull_request_review",
	Title: "Create pull request review",
	Description: "Submit a review of a pull request, with optional comments on lines of the diff (path and line of the " +
		"changed file, as get_pull_request_files shows). GitHub refuses approving or requesting changes on your " +
		"own pull request. Each call adds another review. Returns the review with its state and html_url.",
	DocsURL: "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{},
	Run:     createPullRequestReview,
}

// MergePullRequest merges a pull request.
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#merge-a-pull-request
var MergePullRequest = &providers.Operation[MergePullRequestInput, MergeResult]{
	Name:  "merge_pull_request",
	Title: "Merge pull request",
	Description: "Merge an open pull request into its base branch with a merge commit, a squash or a rebase (merge_method, " +
		"which the repository must allow). This changes the base branch for everyone and cannot be undone by the " +
		"API: check get_pull_request (mergeable), get_pull_request_status and get_pull_request_reviews first. Not " +
		"mergeable answers invalid; a moved head answers conflict. Returns the merge commit's SHA.",
	DocsURL: "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{Destructive: true},
	Run:     mergePullRequest,
}

// UpdatePullRequestBranch merges the base branch into a pull request's head.
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#update-a-pull-request-branch
var UpdatePullRequestBranch = &providers.Operation[UpdatePullBranchInput, UpdatePullBranchOutput]{
	Name:  "update_pull_request_branch",
	Title: "Update pull request branch",
	Description: "Bring a pull request's head branch up to date with its base by merging the base's latest commits into it " +
		"(GitHub's \"Update branch\" button), e.g. when mergeable_state is behind. GitHub does it in the " +
		"background; a conflict leaves the branch unchanged. Returns GitHub's message; read get_pull_request a few " +
		"seconds later to see the new head.",
	DocsURL: "https://docs.github.com/rest/pulls/pulls#update-a-pull-request-branch",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{},
	Run:     updatePullRequestBranch,
}

// PullInput names a pull request.
type PullInput struct {
	Owner      string `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo       string `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	PullNumber int    `json:"pull_number" jsonschema:"Pull request number, as in #1347" schema:"minimum=1,example=1347"`
}

// PullPageInput names a pull request and a page of one of its lists.
type PullPageInput struct {
	Owner      string `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo       string `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	PullNumber int    `json:"pull_number" jsonschema:"Pull request number, as in #1347" schema:"minimum=1,example=1347"`
	providers.PageInput
}

// PullCommentsInput is the input of get_pull_request_comments.
type PullCommentsInput struct {
	Owner      string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo       string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	PullNumber int     `json:"pull_number" jsonschema:"Pull request number, as in #1347" schema:"minimum=1,example=1347"`
	Since      *string `json:"since,omitempty" jsonschema:"Only comments updated at or after this time, e.g. 2024-05-01T00:00:00Z" schema:"format=date-time,example=2024-05-01T00:00:00Z"`
	providers.PageInput
}

// PullFilesOutput is one page of a pull request's changed files.
type PullFilesOutput struct {
	Files      []FileChange `json:"files" jsonschema:"The changed files on this page"`
	NextCursor string       `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// PullStatus is the CI state of a pull request's head commit.
type PullStatus struct {
	State     string     `json:"state,omitempty" jsonschema:"Overall: success, failure, pending, or none when no checks ran" schema:"enum=success|failure|pending|none"`
	HeadSHA   string     `json:"head_sha" jsonschema:"SHA of the pull request's head commit the checks ran on"`
	Statuses  []Status   `json:"statuses" jsonschema:"Commit statuses (external CI), latest per context"`
	CheckRuns []CheckRun `json:"check_runs" jsonschema:"Check runs (GitHub Actions and apps), latest per name"`
}

// Status is one commit status.
type Status struct {
	Context     string `json:"context" jsonschema:"Name of the status, e.g. continuous-integration/jenkins"`
	State       string `json:"state" jsonschema:"error, failure, pending or success"`
	Description string `json:"description,omitempty" jsonschema:"Short text from the CI"`
	TargetURL   string `json:"target_url,omitempty" jsonschema:"Link to the CI's details"`
}

// CheckRun is one check run.
type CheckRun struct {
	Name       string `json:"name" jsonschema:"Name of the check, e.g. build"`
	Status     string `json:"status" jsonschema:"queued, in_progress or completed (also waiting, requested, pending)"`
	Conclusion string `json:"conclusion,omitempty" jsonschema:"Outcome once completed: success, failure, neutral, cancelled, skipped, timed_out, action_required or stale"`
	HTMLURL    string `json:"html_url,omitempty" jsonschema:"Web page of the check run"`
}

// PullCommentsOutput is one page of review comments.
type PullCommentsOutput struct {
	Comments   []ReviewComment `json:"comments" jsonschema:"The review comments on this page"`
	NextCursor string          `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// ReviewComment is a comment on a line of a pull request's diff.
type ReviewComment struct {
	ID          int64  `json:"id" jsonschema:"Comment ID"`
	Path        string `json:"path" jsonschema:"File the comment is on"`
	Line        *int   `json:"line,omitempty" jsonschema:"Line of the file's diff the comment is on; absent when the line is no longer in the diff"`
	Body        string `json:"body" jsonschema:"Text in GitHub Markdown"`
	User        string `json:"user" jsonschema:"Login of the author"`
	InReplyToID *int64 `json:"in_reply_to_id,omitempty" jsonschema:"ID of the comment this one answers"`
	HTMLURL     string `json:"html_url" jsonschema:"Web page of the comment"`
	CreatedAt   string `json:"created_at" jsonschema:"When it was written (RFC 3339)"`
	UpdatedAt   string `json:"updated_at" jsonschema:"When it last changed (RFC 3339)"`
}

// PullReviewsOutput is one page of reviews.
type PullReviewsOutput struct {
	Reviews    []Review `json:"reviews" jsonschema:"The reviews on this page"`
	NextCursor string   `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// Review is a pull request review.
type Review struct {
	ID          int64  `json:"id" jsonschema:"Review ID"`
	User        string `json:"user" jsonschema:"Login of the reviewer"`
	State       string `json:"state" jsonschema:"APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or PENDING"`
	Body        string `json:"body" jsonschema:"Summary text; empty when none"`
	CommitID    string `json:"commit_id,omitempty" jsonschema:"SHA of the commit reviewed"`
	HTMLURL     string `json:"html_url" jsonschema:"Web page of the review"`
	SubmittedAt string `json:"submitted_at,omitempty" jsonschema:"When it was submitted (RFC 3339)"`
}

// CreateReviewInput is the input of create_pull_request_review.
type CreateReviewInput struct {
	Owner      string          `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo       string          `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	PullNumber int             `json:"pull_number" jsonschema:"Pull request number, as in #1347" schema:"minimum=1,example=1347"`
	Event      string          `json:"event" jsonschema:"The verdict: APPROVE, REQUEST_CHANGES or COMMENT" schema:"enum=APPROVE|REQUEST_CHANGES|COMMENT"`
	Body       *string         `json:"body,omitempty" jsonschema:"Summary in GitHub Markdown; required for REQUEST_CHANGES and COMMENT, e.g. Looks good, one nit inline" schema:"maxLength=65536,example=Looks good"`
	CommitID   *string         `json:"commit_id,omitempty" jsonschema:"SHA of the commit reviewed; omit for the current head, e.g. 6dcb09b5b57875f334f61aebed695e2e4193db5e" schema:"minLength=40,maxLength=64,example=6dcb09b5b57875f334f61aebed695e2e4193db5e"`
	Comments   []ReviewLineArg `json:"comments,omitempty" jsonschema:"Comments on lines of the diff" schema:"maxItems=50"`
}

// ReviewLineArg is a comment on one line of a pull request's diff.
type ReviewLineArg struct {
	Path string  `json:"path" jsonschema:"File path as get_pull_request_files lists it, e.g. src/main.go" schema:"minLength=1,example=src/main.go"`
	Line int     `json:"line" jsonschema:"Line number in the file (new version for RIGHT, old for LEFT) that appears in the diff" schema:"minimum=1,example=6"`
	Side *string `json:"side,omitempty" jsonschema:"RIGHT for the new version (added or unchanged lines), LEFT for the old (deleted lines)" schema:"enum=RIGHT|LEFT,default=RIGHT"`
	Body string  `json:"body" jsonschema:"Comment text in GitHub Markdown, e.g. This can be nil here" schema:"minLength=1,maxLength=65536,example=This can be nil here"`
}

// MergePullRequestInput is the input of merge_pull_request.
type MergePullRequestInput struct {
	Owner         string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo          string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	PullNumber    int     `json:"pull_number" jsonschema:"Pull request number, as in #1347" schema:"minimum=1,example=1347"`
	MergeMethod   *string `json:"merge_method,omitempty" jsonschema:"merge: a merge commit; squash: one commit of all changes; rebase: the commits replayed on base" schema:"enum=merge|squash|rebase,default=merge"`
	CommitTitle   *string `json:"commit_title,omitempty" jsonschema:"Title of the merge or squash commit; omit for GitHub's default, e.g. Add feature X (#12)" schema:"minLength=1,maxLength=256,example=Add feature X (#12)"`
	CommitMessage *string `json:"commit_message,omitempty" jsonschema:"Extra text for the commit message, e.g. Reviewed by the team" schema:"maxLength=65536,example=Reviewed by the team"`
	SHA           *string `json:"sha,omitempty" jsonschema:"Merge only if the head is still this SHA, e.g. 6dcb09b5b57875f334f61aebed695e2e4193db5e" schema:"minLength=40,maxLength=64,example=6dcb09b5b57875f334f61aebed695e2e4193db5e"`
}

// MergeResult is the outcome of a merge.
type MergeResult struct {
	Merged  bool   `json:"merged" jsonschema:"True when the pull request was merged"`
	SHA     string `json:"sha" jsonschema:"SHA of the merge (or squash, or last rebased) commit"`
	Message string `json:"message" jsonschema:"GitHub's message"`
}

// UpdatePullBranchInput is the input of update_pull_request_branch.
type UpdatePullBranchInput struct {
	Owner           string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo            string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	PullNumber      int     `json:"pull_number" jsonschema:"Pull request number, as in #1347" schema:"minimum=1,example=1347"`
	ExpectedHeadSHA *string `json:"expected_head_sha,omitempty" jsonschema:"Update only if the head is still this SHA, e.g. 6dcb09b5b57875f334f61aebed695e2e4193db5e" schema:"minLength=40,maxLength=64,example=6dcb09b5b57875f334f61aebed695e2e4193db5e"`
}

// UpdatePullBranchOutput is GitHub's answer to a branch update.
type UpdatePullBranchOutput struct {
	Message string `json:"message" jsonschema:"GitHub's message, e.g. Updating pull request branch."`
}

// pullPath builds /repos/{owner}/{repo}/pulls/{pull_number}{/rest…}.
func pullPath(owner, repo string, number int, rest ...string) (string, error) {
	if err := checkNumber("pull_number", number); err != nil {
		return "", err
	}
	return repoPath(owner, repo, append([]string{"pulls", strconv.Itoa(number)}, rest...)...)
}

func getPullRequestFiles(ctx context.Context, c *providers.Call, in PullPageInput) (PullFilesOutput, error) {
	p, err := pullPath(in.Owner, in.Repo, in.PullNumber, "files")
	if err != nil {
		return PullFilesOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return PullFilesOutput{}, err
	}
	var res []ghFile
	h, err := request{method: http.MethodGet, path: p, query: q}.do(ctx, c, &res)
	if err != nil {
		return PullFilesOutput{}, err
	}
	return PullFilesOutput{Files: fileChanges(res), NextCursor: nextCursor(h, q)}, nil
}

func getPullRequestStatus(ctx context.Context, c *providers.Call, in PullInput) (PullStatus, error) {
	pr, err := getPullRequest(ctx, c, GetPullRequestInput(in))
	if err != nil {
		return PullStatus{}, err
	}
	sha := pr.Head.SHA
	if sha == "" {
		return PullStatus{}, &providers.UpstreamError{Provider: providerName, Status: http.StatusOK, Code: switchboard.CodeUpstream,
			Message: "GitHub answered the pull request without a head SHA"}
	}
	statusPath, err := repoPath(in.Owner, in.Repo, "commits", sha, "status")
	if err != nil {
		return PullStatus{}, err
	}
	checksPath, _ := repoPath(in.Owner, in.Repo, "commits", sha, "check-runs")
	page := url.Values{"per_page": {strconv.Itoa(maxPageSize)}}
	var combined struct {
		State    string `json:"state"`
		Statuses []struct {
			Context     string  `json:"context"`
			State       string  `json:"state"`
			Description *string `json:"description"`
			TargetURL   *string `json:"target_url"`
		} `json:"statuses"`
	}
	if _, err := (request{method: http.MethodGet, path: statusPath, query: page}).do(ctx, c, &combined); err != nil {
		return PullStatus{}, fmt.Errorf("read statuses of %s: %w", sha, err)
	}
	var checks struct {
		CheckRuns []struct {
			Name       string  `json:"name"`
			Status     string  `json:"status"`
			Conclusion *string `json:"conclusion"`
			HTMLURL    *string `json:"html_url"`
		} `json:"check_runs"`
	}
	if _, err := (request{method: http.MethodGet, path: checksPath, query: page}).do(ctx, c, &checks); err != nil {
		return PullStatus{}, fmt.Errorf("read check runs of %s: %w", sha, err)
	}
	out := PullStatus{HeadSHA: sha, Statuses: make([]Status, 0, len(combined.Statuses)), CheckRuns: make([]CheckRun, 0, len(checks.CheckRuns))}
	var failed, pending bool
	for _, s := range combined.Statuses {
		out.Statuses = append(out.Statuses, Status{Context: s.Context, State: s.State, Description: deref(s.Description), TargetURL: deref(s.TargetURL)})
		switch s.State {
		case "failure", "error":
			failed = true
		case "pending":
			pending = true
		}
	}
	for _, r := range checks.CheckRuns {
		out.CheckRuns = append(out.CheckRuns, CheckRun{Name: r.Name, Status: r.Status, Conclusion: deref(r.Conclusion), HTMLURL: deref(r.HTMLURL)})
		switch {
		case r.Status != "completed":
			pending = true
		case r.Conclusion != nil && (*r.Conclusion == "failure" || *r.Conclusion == "timed_out" || *r.Conclusion == "cancelled" ||
			*r.Conclusion == "action_required" || *r.Conclusion == "startup_failure"):
			failed = true
		}
	}
	switch {
	case failed:
		out.State = "failure"
	case pending:
		out.State = "pending"
	case len(out.Statuses)+len(out.CheckRuns) == 0:
		out.State = "none"
	default:
		out.State = "success"
	}
	return out, nil
}

// ghReviewComment is the part of GitHub's pull-request-review-comment object we read.
type ghReviewComment struct {
	ID          int64   `json:"id"`
	Path        string  `json:"path"`
	Line        *int    `json:"line"`
	Body        string  `json:"body"`
	User        *ghUser `json:"user"`
	InReplyToID *int64  `json:"in_reply_to_id"`
	HTMLURL     string  `json:"html_url"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
}

func getPullRequestComments(ctx context.Context, c *providers.Call, in PullCommentsInput) (PullCommentsOutput, error) {
	p, err := pullPath(in.Owner, in.Repo, in.PullNumber, "comments")
	if err != nil {
		return PullCommentsOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return PullCommentsOutput{}, err
	}
	if in.Since != nil {
		if _, err := time.Parse(time.RFC3339, *in.Since); err != nil {
			return PullCommentsOutput{}, switchboard.Invalid("since", "must be an RFC 3339 time such as 2024-05-01T00:00:00Z")
		}
		q.Set("since", *in.Since)
	}
	var res []ghReviewComment
	h, err := request{method: http.MethodGet, path: p, query: q}.do(ctx, c, &res)
	if err != nil {
		return PullCommentsOutput{}, err
	}
	out := PullCommentsOutput{Comments: make([]ReviewComment, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, rc := range res {
		out.Comments = append(out.Comments, ReviewComment{ID: rc.ID, Path: rc.Path, Line: rc.Line, Body: rc.Body, User: login(rc.User),
			InReplyToID: rc.InReplyToID, HTMLURL: rc.HTMLURL, CreatedAt: rc.CreatedAt, UpdatedAt: rc.UpdatedAt})
	}
	return out, nil
}

// ghReview is the part of GitHub's pull-request-review object we read.
type ghReview struct {
	ID          int64   `json:"id"`
	User        *ghUser `json:"user"`
	State       string  `json:"state"`
	Body        string  `json:"body"`
	CommitID    *string `json:"commit_id"`
	HTMLURL     string  `json:"html_url"`
	SubmittedAt *string `json:"submitted_at"`
}

func (r ghReview) output() Review {
	return Review{ID: r.ID, User: login(r.User), State: r.State, Body: r.Body, CommitID: deref(r.CommitID), HTMLURL: r.HTMLURL, SubmittedAt: deref(r.SubmittedAt)}
}

func getPullRequestReviews(ctx context.Context, c *providers.Call, in PullPageInput) (PullReviewsOutput, error) {
	p, err := pullPath(in.Owner, in.Repo, in.PullNumber, "reviews")
	if err != nil {
		return PullReviewsOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return PullReviewsOutput{}, err
	}
	var res []ghReview
	h, err := request{method: http.MethodGet, path: p, query: q}.do(ctx, c, &res)
	if err != nil {
		return PullReviewsOutput{}, err
	}
	out := PullReviewsOutput{Reviews: make([]Review, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, r := range res {
		out.Reviews = append(out.Reviews, r.output())
	}
	return out, nil
}

// createReviewBody is the JSON body of POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews.
type createReviewBody struct {
	Event    string          `json:"event"`
	Body     *string         `json:"body,omitempty"`
	CommitID *string         `json:"commit_id,omitempty"`
	Comments []ReviewLineArg `json:"comments,omitempty"`
}

func createPullRequestReview(ctx context.Context, c *providers.Call, in CreateReviewInput) (Review, error) {
	p, err := pullPath(in.Owner, in.Repo, in.PullNumber, "reviews")
	if err != nil {
		return Review{}, err
	}
	switch in.Event {
	case "APPROVE":
	case "REQUEST_CHANGES", "COMMENT":
		if in.Body == nil || strings.TrimSpace(*in.Body) == "" {
			return Review{}, switchboard.Invalid("body", "is required for "+in.Event+": say what should change or what you comment")
		}
	default:
		return Review{}, switchboard.Invalid("event", "must be APPROVE, REQUEST_CHANGES or COMMENT")
	}
	for i, cm := range in.Comments {
		if strings.TrimSpace(cm.Path) == "" {
			return Review{}, switchboard.Invalid(fmt.Sprintf("comments[%d].path", i), "is required: the file the comment is on")
		}
		if strings.TrimSpace(cm.Body) == "" {
			return Review{}, switchboard.Invalid(fmt.Sprintf("comments[%d].body", i), "is required and must not be blank")
		}
	}
	body := createReviewBody{Event: in.Event, Body: in.Body, CommitID: in.CommitID, Comments: in.Comments}
	var res ghReview
	if _, err := (request{method: http.MethodPost, path: p, body: body}).do(ctx, c, &res); err != nil {
		return Review{}, err
	}
	return res.output(), nil
}

// mergeBody is the JSON body of PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge.
type mergeBody struct {
	CommitTitle   *string `json:"commit_title,omitempty"`
	CommitMessage *string `json:"commit_message,omitempty"`
	SHA           *string `json:"sha,omitempty"`
	MergeMethod   *string `json:"merge_method,omitempty"`
}

func mergePullRequest(ctx context.Context, c *providers.Call, in MergePullRequestInput) (MergeResult, error) {
	p, err := pullPath(in.Owner, in.Repo, in.PullNumber, "merge")
	if err != nil {
		return MergeResult{}, err
	}
	var res struct {
		SHA     string `json:"sha"`
		Merged  bool   `json:"merged"`
		Message string `json:"message"`
	}
	body := mergeBody{CommitTitle: in.CommitTitle, CommitMessage: in.CommitMessage, SHA: in.SHA, MergeMethod: in.MergeMethod}
	if _, err := (request{method: http.MethodPut, path: p, body: body}).do(ctx, c, &res); err != nil {
		return MergeResult{}, err
	}
	return MergeResult{Merged: res.Merged, SHA: res.SHA, Message: res.Message}, nil
}

func updatePullRequestBranch(ctx context.Context, c *providers.Call, in UpdatePullBranchInput) (UpdatePullBranchOutput, error) {
	p, err := pullPath(in.Owner, in.Repo, in.PullNumber, "update-branch")
	if err != nil {
		return UpdatePullBranchOutput{}, err
	}
	body := map[string]string{}
	if in.ExpectedHeadSHA != nil {
		body["expected_head_sha"] = *in.ExpectedHeadSHA
	}
	var res struct {
		Message string `json:"message"`
	}
	if _, err := (request{method: http.MethodPut, path: p, body: body}).do(ctx, c, &res); err != nil {
		return UpdatePullBranchOutput{}, err
	}
	return UpdatePullBranchOutput{Message: res.Message}, nil
}
