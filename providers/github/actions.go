package github

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListWorkflowRuns lists a repository's GitHub Actions workflow runs, newest first.
// GitHub API docs: https://docs.github.com/rest/actions/workflow-runs#list-workflow-runs-for-a-repository
var ListWorkflowRuns = &providers.Operation[ListWorkflowRunsInput, ListWorkflowRunsOutput]{
	Name:  "list_workflow_runs",
	Title: "List workflow runs",
	Description: "List the GitHub Actions workflow runs of a repository, newest first: workflow name, status, conclusion, " +
		"branch, commit, event and link. Use a run's id with rerun_workflow_run or get_workflow_run_logs_url. " +
		"Returns a page of them and total_count.",
	DocsURL: "https://docs.github.com/rest/actions/workflow-runs#list-workflow-runs-for-a-repository",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listWorkflowRuns,
}

// RerunWorkflowRun re-runs a workflow run.
// GitHub API docs: https://docs.github.com/rest/actions/workflow-runs#re-run-a-workflow
var RerunWorkflowRun = &providers.Operation[RerunWorkflowRunInput, RerunWorkflowRunOutput]{
	Name:  "rerun_workflow_run",
	Title: "Re-run workflow run",
	Description: "Run every job of a finished workflow run again, on the same commit (e.g. after a flaky failure). GitHub " +
		"queues it as a new attempt of the same run id; follow it with list_workflow_runs. A run still in progress " +
		"answers forbidden or invalid. Needs write access to Actions. Returns the run id and that the re-run was queued.",
	DocsURL: "https://docs.github.com/rest/actions/workflow-runs#re-run-a-workflow",
	Scopes:  []string{"repo", "workflow"},
	Hints:   providers.Hints{},
	Run:     rerunWorkflowRun,
}

// GetWorkflowRunLogsURL returns where to download a run's logs.
// GitHub API docs: https://docs.github.com/rest/actions/workflow-runs#download-workflow-run-logs
var GetWorkflowRunLogsURL = &providers.Operation[WorkflowRunInput, WorkflowRunLogsURL]{
	Name:  "get_workflow_run_logs_url",
	Title: "Get workflow run logs URL",
	Description: "Get a short-lived URL (valid about a minute) to download the logs of a workflow run as a zip archive; " +
		"the logs themselves are not fetched. Ask again when it expired. Runs older than the retention period (90 days " +
		"by default) answer not_found. Returns the URL.",
	DocsURL: "https://docs.github.com/rest/actions/workflow-runs#download-workflow-run-logs",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getWorkflowRunLogsURL,
}

// ListWorkflowRunsInput is the input of list_workflow_runs.
type ListWorkflowRunsInput struct {
	Owner   string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo    string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	Branch  *string `json:"branch,omitempty" jsonschema:"Only runs on this branch, e.g. main" schema:"minLength=1,example=main"`
	HeadSHA *string `json:"head_sha,omitempty" jsonschema:"Only runs of this commit, e.g. acb5820ced9479c074f688cc328bf03f341a511d" schema:"minLength=1,example=acb5820ced9479c074f688cc328bf03f341a511d"`
	Event   *string `json:"event,omitempty" jsonschema:"Only runs triggered by this event, e.g. push" schema:"minLength=1,example=push"`
	Actor   *string `json:"actor,omitempty" jsonschema:"Only runs started by this login, e.g. octocat" schema:"minLength=1,example=octocat"`
	Status  *string `json:"status,omitempty" jsonschema:"Only runs with this status or conclusion" schema:"enum=completed|action_required|cancelled|failure|neutral|skipped|stale|success|timed_out|in_progress|queued|requested|waiting|pending"`
	providers.PageInput
}

// ListWorkflowRunsOutput is one page of workflow runs.
type ListWorkflowRunsOutput struct {
	TotalCount int           `json:"total_count" jsonschema:"Number of runs matching, across all pages"`
	Runs       []WorkflowRun `json:"runs" jsonschema:"The runs on this page, newest first"`
	NextCursor string        `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// WorkflowRun is one run of a GitHub Actions workflow.
type WorkflowRun struct {
	ID         int64  `json:"id" jsonschema:"Run ID, for rerun_workflow_run and get_workflow_run_logs_url"`
	Name       string `json:"name" jsonschema:"Workflow name"`
	Title      string `json:"title" jsonschema:"What the run is about, e.g. the commit message or pull request title"`
	Status     string `json:"status" jsonschema:"queued, in_progress, completed, waiting, requested or pending"`
	Conclusion string `json:"conclusion,omitempty" jsonschema:"Outcome once completed: success, failure, cancelled, skipped, timed_out, action_required or neutral"`
	Branch     string `json:"branch" jsonschema:"Branch the run is on"`
	HeadSHA    string `json:"head_sha" jsonschema:"Commit the run is on"`
	Event      string `json:"event" jsonschema:"What triggered it, e.g. push, pull_request, schedule"`
	Actor      string `json:"actor,omitempty" jsonschema:"Login of the person who triggered it"`
	RunNumber  int    `json:"run_number" jsonschema:"Run number within the workflow"`
	Attempt    int    `json:"attempt" jsonschema:"Attempt number; above 1 after a re-run"`
	HTMLURL    string `json:"html_url" jsonschema:"Web page of the run"`
	CreatedAt  string `json:"created_at" jsonschema:"When it was created (RFC 3339)"`
	UpdatedAt  string `json:"updated_at" jsonschema:"When it last changed (RFC 3339)"`
}

// WorkflowRunInput names a workflow run.
type WorkflowRunInput struct {
	Owner string `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo  string `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	RunID int64  `json:"run_id" jsonschema:"Workflow run ID from list_workflow_runs, e.g. 30433642" schema:"minimum=1,example=30433642"`
}

// RerunWorkflowRunInput is the input of rerun_workflow_run.
type RerunWorkflowRunInput struct {
	Owner              string `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo               string `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	RunID              int64  `json:"run_id" jsonschema:"Workflow run ID from list_workflow_runs, e.g. 30433642" schema:"minimum=1,example=30433642"`
	EnableDebugLogging *bool  `json:"enable_debug_logging,omitempty" jsonschema:"Run with debug logging on" schema:"default=false"`
}

// RerunWorkflowRunOutput confirms a re-run.
type RerunWorkflowRunOutput struct {
	RunID  int64 `json:"run_id" jsonschema:"The run re-run"`
	Queued bool  `json:"queued" jsonschema:"True when GitHub queued the new attempt"`
}

// WorkflowRunLogsURL is where to download a run's logs.
type WorkflowRunLogsURL struct {
	URL       string `json:"url" jsonschema:"Short-lived URL of the logs' zip archive"`
	ExpiresIn int    `json:"expires_in_seconds" jsonschema:"About how long the URL stays valid, in seconds"`
}

// ghWorkflowRun is the part of GitHub's workflow-run object we read.
type ghWorkflowRun struct {
	ID           int64   `json:"id"`
	Name         *string `json:"name"`
	DisplayTitle string  `json:"display_title"`
	Status       *string `json:"status"`
	Conclusion   *string `json:"conclusion"`
	HeadBranch   *string `json:"head_branch"`
	HeadSHA      string  `json:"head_sha"`
	Event        string  `json:"event"`
	Actor        *ghUser `json:"actor"`
	RunNumber    int     `json:"run_number"`
	RunAttempt   int     `json:"run_attempt"`
	HTMLURL      string  `json:"html_url"`
	CreatedAt    string  `json:"created_at"`
	UpdatedAt    string  `json:"updated_at"`
}

func listWorkflowRuns(ctx context.Context, c *providers.Call, in ListWorkflowRunsInput) (ListWorkflowRunsOutput, error) {
	p, err := repoPath(in.Owner, in.Repo, "actions", "runs")
	if err != nil {
		return ListWorkflowRunsOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListWorkflowRunsOutput{}, err
	}
	setOpt(q, "branch", in.Branch)
	setOpt(q, "head_sha", in.HeadSHA)
	setOpt(q, "event", in.Event)
	setOpt(q, "actor", in.Actor)
	setOpt(q, "status", in.Status)
	var res struct {
		TotalCount   int             `json:"total_count"`
		WorkflowRuns []ghWorkflowRun `json:"workflow_runs"`
	}
	h, err := request{method: http.MethodGet, path: p, query: q}.do(ctx, c, &res)
	if err != nil {
		return ListWorkflowRunsOutput{}, err
	}
	out := ListWorkflowRunsOutput{TotalCount: res.TotalCount, Runs: make([]WorkflowRun, 0, len(res.WorkflowRuns)), NextCursor: nextCursor(h, q)}
	for _, r := range res.WorkflowRuns {
		out.Runs = append(out.Runs, WorkflowRun{ID: r.ID, Name: deref(r.Name), Title: r.DisplayTitle, Status: deref(r.Status),
			Conclusion: deref(r.Conclusion), Branch: deref(r.HeadBranch), HeadSHA: r.HeadSHA, Event: r.Event, Actor: login(r.Actor),
			RunNumber: r.RunNumber, Attempt: r.RunAttempt, HTMLURL: r.HTMLURL, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt})
	}
	return out, nil
}

// runPath builds /repos/{owner}/{repo}/actions/runs/{run_id}/{rest…}.
func runPath(owner, repo string, id int64, rest ...string) (string, error) {
	if id < 1 {
		return "", switchboard.Invalid("run_id", "must be a positive workflow run ID from list_workflow_runs")
	}
	return repoPath(owner, repo, append([]string{"actions", "runs", strconv.FormatInt(id, 10)}, rest...)...)
}

func rerunWorkflowRun(ctx context.Context, c *providers.Call, in RerunWorkflowRunInput) (RerunWorkflowRunOutput, error) {
	p, err := runPath(in.Owner, in.Repo, in.RunID, "rerun")
	if err != nil {
		return RerunWorkflowRunOutput{}, err
	}
	var body any
	if in.EnableDebugLogging != nil {
		body = map[string]bool{"enable_debug_logging": *in.EnableDebugLogging}
	}
	if _, err := (request{method: http.MethodPost, path: p, body: body}).do(ctx, c, nil); err != nil {
		return RerunWorkflowRunOutput{}, err
	}
	return RerunWorkflowRunOutput{RunID: in.RunID, Queued: true}, nil
}

// logsURLLifetime is how long GitHub says a logs download URL stays valid.
const logsURLLifetime = time.Minute

func getWorkflowRunLogsURL(ctx context.Context, c *providers.Call, in WorkflowRunInput) (WorkflowRunLogsURL, error) {
	p, err := runPath(in.Owner, in.Repo, in.RunID, "logs")
	if err != nil {
		return WorkflowRunLogsURL{}, err
	}
	loc, err := request{method: http.MethodGet, path: p}.location(ctx, c)
	if err != nil {
		return WorkflowRunLogsURL{}, err
	}
	return WorkflowRunLogsURL{URL: loc, ExpiresIn: int(logsURLLifetime / time.Second)}, nil
}
