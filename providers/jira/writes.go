package jira

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// UpdateIssue changes an issue's fields.
// Jira API docs: https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-issueidorkey-put
var UpdateIssue = &providers.Operation[UpdateIssueInput, UpdatedIssue]{
	Name:  "update_issue",
	Title: "Update issue",
	Description: "Change fields of a Jira issue given by key (PROJ-123): summary, plain-text description (replaced " +
		"whole), assignee (an Atlassian account ID, or unassign), priority, labels (the list replaces the current " +
		"labels), parent or due date. Only the fields given change. It does not change the status: use " +
		"list_transitions and transition_issue for that. Returns the issue's key, URL and the fields changed.",
	DocsURL: "https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-issueidorkey-put",
	Scopes:  []string{"write:jira-work"},
	Hints:   providers.Hints{Destructive: true, Idempotent: true},
	Run:     updateIssue,
}

// UpdateIssueInput is the input of update_issue.
type UpdateIssueInput struct {
	Key         string   `json:"key" jsonschema:"The issue key (or numeric ID)" schema:"minLength=1,example=PROJ-123"`
	Summary     *string  `json:"summary,omitempty" jsonschema:"New summary" schema:"minLength=1,maxLength=255,example=Login times out on slow networks"`
	Description *string  `json:"description,omitempty" jsonschema:"New plain-text description; replaces the current one" schema:"example=Fixed by raising the timeout."`
	AssigneeID  *string  `json:"assignee_account_id,omitempty" jsonschema:"Atlassian account ID of the new assignee" schema:"minLength=1,example=5b10ac8d82e05b22cc7d4ef5"`
	Unassign    *bool    `json:"unassign,omitempty" jsonschema:"true removes the assignee"`
	Priority    *string  `json:"priority,omitempty" jsonschema:"Priority name, e.g. High" schema:"minLength=1,example=High"`
	Labels      []string `json:"labels,omitempty" jsonschema:"The labels the issue should have; replaces the current labels"`
	Parent      *string  `json:"parent,omitempty" jsonschema:"Key of the new parent (an epic)" schema:"example=PROJ-100"`
	DueDate     *string  `json:"due_date,omitempty" jsonschema:"Due date, YYYY-MM-DD" schema:"example=2026-12-31,pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
}

// UpdatedIssue says what update_issue changed.
type UpdatedIssue struct {
	Key     string   `json:"key" jsonschema:"The issue's key"`
	URL     string   `json:"url,omitempty" jsonschema:"The issue's address on the Jira site"`
	Changed []string `json:"changed" jsonschema:"The Jira fields that were set"`
}

func updateIssue(ctx context.Context, c *providers.Call, in UpdateIssueInput) (UpdatedIssue, error) {
	p, key, err := issuePath("key", in.Key, "")
	if err != nil {
		return UpdatedIssue{}, err
	}
	fields := map[string]any{}
	if in.Summary != nil {
		s := strings.TrimSpace(*in.Summary)
		if s == "" {
			return UpdatedIssue{}, switchboard.Invalid("summary", "is empty")
		}
		fields["summary"] = s
	}
	if in.Unassign != nil && *in.Unassign {
		if in.AssigneeID != nil {
			return UpdatedIssue{}, switchboard.Invalid("unassign", "cannot be combined with assignee_account_id")
		}
		fields["assignee"] = nil
	}
	if err := setFields(fields, in.Description, in.AssigneeID, in.Priority, in.Labels, in.Parent, in.DueDate); err != nil {
		return UpdatedIssue{}, err
	}
	if len(fields) == 0 {
		return UpdatedIssue{}, switchboard.Invalid("arguments", "nothing to change: give at least one field besides key")
	}
	if err := (request{method: http.MethodPut, path: p, body: map[string]any{"fields": fields}, fields: createFields}).do(ctx, c, nil); err != nil {
		return UpdatedIssue{}, err
	}
	out := UpdatedIssue{Key: key, URL: browseURL(c, key)}
	for f := range fields {
		out.Changed = append(out.Changed, f)
	}
	slices.Sort(out.Changed)
	return out, nil
}

// AddComment comments on an issue.
// Jira API docs: https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issue-comments/#api-rest-api-3-issue-issueidorkey-comment-post
var AddComment = &providers.Operation[AddCommentInput, Comment]{
	Name:  "add_comment",
	Title: "Add comment",
	Description: "Post a plain-text comment on a Jira issue given by key (PROJ-123), as the connected user; blank " +
		"lines separate paragraphs. Each call posts a new comment: do not retry one that succeeded. Returns the new " +
		"comment with its ID and author.",
	DocsURL: "https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issue-comments/#api-rest-api-3-issue-issueidorkey-comment-post",
	Scopes:  []string{"write:jira-work"},
	Hints:   providers.Hints{},
	Run:     addComment,
}

// AddCommentInput is the input of add_comment.
type AddCommentInput struct {
	Key  string `json:"key" jsonschema:"The issue key (or numeric ID)" schema:"minLength=1,example=PROJ-123"`
	Body string `json:"body" jsonschema:"The comment as plain text" schema:"minLength=1,maxLength=32767,example=Reproduced on staging; looking into it."`
}

func addComment(ctx context.Context, c *providers.Call, in AddCommentInput) (Comment, error) {
	p, _, err := issuePath("key", in.Key, "/comment")
	if err != nil {
		return Comment{}, err
	}
	if strings.TrimSpace(in.Body) == "" {
		return Comment{}, switchboard.Invalid("body", "is empty")
	}
	var r commentObject
	if err := (request{method: http.MethodPost, path: p, body: map[string]any{"body": adfFromText(in.Body)}, fields: map[string]string{"comment": "body", "body": "body"}}).do(ctx, c, &r); err != nil {
		return Comment{}, err
	}
	return r.toComment(), nil
}
