package linear

import (
	"context"
	"regexp"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// CreateIssue creates an issue in a team.
// Linear API docs: https://linear.app/developers/graphql#creating-and-editing-issues
var CreateIssue = &providers.Operation[CreateIssueInput, Issue]{
	Name:  "create_issue",
	Title: "Create issue",
	Description: "Create a Linear issue in a team (its key such as ENG, or its ID) with a title and an optional " +
		"Markdown description, priority (1 urgent … 4 low), assignee, workflow state, labels, project, parent issue, " +
		"estimate and due date. IDs for state_id, label and project come from list_teams and list_projects. Each call " +
		"creates a new issue: do not retry one that succeeded. Returns the new issue with its identifier (ENG-123) and URL.",
	DocsURL: "https://linear.app/developers/graphql#creating-and-editing-issues",
	Scopes:  []string{"write"},
	Hints:   providers.Hints{},
	Run:     createIssue,
}

// CreateIssueInput is the input of create_issue.
type CreateIssueInput struct {
	Team        string   `json:"team" jsonschema:"Team key (e.g. ENG) or team ID" schema:"minLength=1,example=ENG"`
	Title       string   `json:"title" jsonschema:"The issue's title" schema:"minLength=1,maxLength=255,example=Login times out on slow networks"`
	Description *string  `json:"description,omitempty" jsonschema:"The issue's description in Markdown" schema:"example=Steps to reproduce: ..."`
	Priority    *int     `json:"priority,omitempty" jsonschema:"0 none, 1 urgent, 2 high, 3 medium, 4 low" schema:"enum=0|1|2|3|4"`
	AssigneeID  *string  `json:"assignee_id,omitempty" jsonschema:"ID of the user to assign" schema:"example=5c3b2c4e-7f1a-4f7e-9a45-2d1f0c9e8b7a"`
	StateID     *string  `json:"state_id,omitempty" jsonschema:"ID of the workflow state (one of the team's states from list_teams); default: the team's default state" schema:"example=3f1d2a7c-5b4e-4c8d-9e0f-1a2b3c4d5e6f"`
	LabelIDs    []string `json:"label_ids,omitempty" jsonschema:"IDs of labels to set"`
	ProjectID   *string  `json:"project_id,omitempty" jsonschema:"ID of the project to add the issue to (from list_projects)" schema:"example=7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"`
	ParentID    *string  `json:"parent_id,omitempty" jsonschema:"Identifier or ID of the parent issue, to make this a sub-issue" schema:"example=ENG-100"`
	Estimate    *int     `json:"estimate,omitempty" jsonschema:"Estimate in the team's points" schema:"minimum=0,example=3"`
	DueDate     *string  `json:"due_date,omitempty" jsonschema:"Due date, YYYY-MM-DD" schema:"example=2026-12-31,pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
}

const createIssueMutation = `mutation CreateIssue($input: IssueCreateInput!) {
  issueCreate(input: $input) {
    success
    issue { ...IssueFields }
  }
}
` + issueFields

const teamByKeyQuery = `query TeamByKey($key: String!) {
  teams(filter: { key: { eqIgnoreCase: $key } }, first: 1) { nodes { id key } }
}`

// teamID resolves a team key (ENG) to its ID; an ID is returned as it is.
func teamID(ctx context.Context, c *providers.Call, field, team string) (string, error) {
	team = strings.TrimSpace(team)
	if uuidPattern.MatchString(team) {
		return strings.ToLower(team), nil
	}
	if !teamKeyPattern.MatchString(team) {
		return "", switchboard.Invalid(field, "must be a team key such as ENG or a team ID; list_teams gives them")
	}
	var data struct {
		Teams struct {
			Nodes []struct{ ID, Key string } `json:"nodes"`
		} `json:"teams"`
	}
	if err := query(ctx, c, "TeamByKey", teamByKeyQuery, map[string]any{"key": team}, &data); err != nil {
		return "", err
	}
	if len(data.Teams.Nodes) == 0 {
		return "", &switchboard.Error{Code: switchboard.CodeInvalid, Field: field, Message: "no team with the key " + team + " is visible to this connection; list_teams gives the keys"}
	}
	return data.Teams.Nodes[0].ID, nil
}

func createIssue(ctx context.Context, c *providers.Call, in CreateIssueInput) (Issue, error) {
	title := strings.TrimSpace(in.Title)
	if title == "" {
		return Issue{}, switchboard.Invalid("title", "is empty")
	}
	input := map[string]any{"title": title}
	if err := setIssueFields(input, issueFieldsInput{
		Description: in.Description, Priority: in.Priority, AssigneeID: in.AssigneeID, StateID: in.StateID,
		LabelIDs: in.LabelIDs, ProjectID: in.ProjectID, ParentID: in.ParentID, Estimate: in.Estimate, DueDate: in.DueDate,
	}); err != nil {
		return Issue{}, err
	}
	id, err := teamID(ctx, c, "team", in.Team)
	if err != nil {
		return Issue{}, err
	}
	input["teamId"] = id
	var data struct {
		IssueCreate struct {
			Success bool       `json:"success"`
			Issue   *issueNode `json:"issue"`
		} `json:"issueCreate"`
	}
	if err := query(ctx, c, "CreateIssue", createIssueMutation, map[string]any{"input": input}, &data); err != nil {
		return Issue{}, err
	}
	if !data.IssueCreate.Success || data.IssueCreate.Issue == nil {
		return Issue{}, &providers.UpstreamError{Provider: providerName, Status: 200, Code: switchboard.CodeUpstream, Message: "Linear did not create the issue"}
	}
	return data.IssueCreate.Issue.toIssue(), nil
}

// issueFieldsInput holds the optional fields create_issue and update_issue share.
type issueFieldsInput struct {
	Description *string
	Priority    *int
	AssigneeID  *string
	StateID     *string
	LabelIDs    []string
	ProjectID   *string
	ParentID    *string
	Estimate    *int
	DueDate     *string
}

var datePattern = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// setIssueFields checks the shared fields and sets them on a mutation input.
func setIssueFields(input map[string]any, f issueFieldsInput) error {
	if f.Description != nil {
		input["description"] = *f.Description
	}
	if f.Priority != nil {
		if *f.Priority < 0 || *f.Priority > 4 {
			return switchboard.Invalid("priority", "must be 0 (none), 1 (urgent), 2 (high), 3 (medium) or 4 (low)")
		}
		input["priority"] = *f.Priority
	}
	for _, id := range []struct {
		field, key string
		v          *string
	}{{"assignee_id", "assigneeId", f.AssigneeID}, {"state_id", "stateId", f.StateID}, {"project_id", "projectId", f.ProjectID}} {
		if id.v == nil {
			continue
		}
		if err := checkUUID(id.field, *id.v); err != nil {
			return err
		}
		input[id.key] = strings.ToLower(strings.TrimSpace(*id.v))
	}
	if f.LabelIDs != nil {
		ids := make([]string, 0, len(f.LabelIDs))
		for _, l := range f.LabelIDs {
			if err := checkUUID("label_ids", l); err != nil {
				return err
			}
			ids = append(ids, strings.ToLower(strings.TrimSpace(l)))
		}
		input["labelIds"] = ids
	}
	if f.ParentID != nil {
		p, err := checkIssueRef("parent_id", *f.ParentID)
		if err != nil {
			return err
		}
		input["parentId"] = p
	}
	if f.Estimate != nil {
		if *f.Estimate < 0 {
			return switchboard.Invalid("estimate", "must not be negative")
		}
		input["estimate"] = *f.Estimate
	}
	if f.DueDate != nil {
		if !datePattern.MatchString(*f.DueDate) {
			return switchboard.Invalid("due_date", "must be a date such as 2026-12-31")
		}
		input["dueDate"] = *f.DueDate
	}
	return nil
}

// UpdateIssue changes an issue's fields.
// Linear API docs: https://linear.app/developers/graphql#creating-and-editing-issues
var UpdateIssue = &providers.Operation[UpdateIssueInput, Issue]{
	Name:  "update_issue",
	Title: "Update issue",
	Description: "Change a Linear issue given by identifier (ENG-123) or ID: title, Markdown description (replaced " +
		"whole), priority, assignee (or unassign), workflow state (state_id from list_teams: this is how to move an " +
		"issue to In Progress or Done), labels (the list replaces the current labels), project, parent, estimate or " +
		"due date. Only the fields given change. Returns the issue as it is after the change.",
	DocsURL: "https://linear.app/developers/graphql#creating-and-editing-issues",
	Scopes:  []string{"write"},
	Hints:   providers.Hints{Destructive: true, Idempotent: true},
	Run:     updateIssue,
}

// UpdateIssueInput is the input of update_issue.
type UpdateIssueInput struct {
	Issue       string   `json:"issue" jsonschema:"The issue's identifier (e.g. ENG-123) or ID" schema:"minLength=1,example=ENG-123"`
	Title       *string  `json:"title,omitempty" jsonschema:"New title" schema:"minLength=1,maxLength=255,example=Login times out on slow networks"`
	Description *string  `json:"description,omitempty" jsonschema:"New description in Markdown; replaces the current one" schema:"example=Fixed by raising the timeout."`
	Priority    *int     `json:"priority,omitempty" jsonschema:"0 none, 1 urgent, 2 high, 3 medium, 4 low" schema:"enum=0|1|2|3|4"`
	AssigneeID  *string  `json:"assignee_id,omitempty" jsonschema:"ID of the user to assign" schema:"example=5c3b2c4e-7f1a-4f7e-9a45-2d1f0c9e8b7a"`
	Unassign    *bool    `json:"unassign,omitempty" jsonschema:"true removes the assignee"`
	StateID     *string  `json:"state_id,omitempty" jsonschema:"ID of the workflow state to move the issue to (one of its team's states from list_teams)" schema:"example=3f1d2a7c-5b4e-4c8d-9e0f-1a2b3c4d5e6f"`
	LabelIDs    []string `json:"label_ids,omitempty" jsonschema:"IDs of the labels the issue should have; replaces the current labels"`
	ProjectID   *string  `json:"project_id,omitempty" jsonschema:"ID of the project to move the issue to" schema:"example=7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"`
	ParentID    *string  `json:"parent_id,omitempty" jsonschema:"Identifier or ID of the new parent issue" schema:"example=ENG-100"`
	Estimate    *int     `json:"estimate,omitempty" jsonschema:"Estimate in the team's points" schema:"minimum=0,example=3"`
	DueDate     *string  `json:"due_date,omitempty" jsonschema:"Due date, YYYY-MM-DD" schema:"example=2026-12-31,pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
}

const updateIssueMutation = `mutation UpdateIssue($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) {
    success
    issue { ...IssueFields }
  }
}
` + issueFields

func updateIssue(ctx context.Context, c *providers.Call, in UpdateIssueInput) (Issue, error) {
	id, err := checkIssueRef("issue", in.Issue)
	if err != nil {
		return Issue{}, err
	}
	input := map[string]any{}
	if in.Title != nil {
		t := strings.TrimSpace(*in.Title)
		if t == "" {
			return Issue{}, switchboard.Invalid("title", "is empty")
		}
		input["title"] = t
	}
	if in.Unassign != nil && *in.Unassign {
		if in.AssigneeID != nil {
			return Issue{}, switchboard.Invalid("unassign", "cannot be combined with assignee_id")
		}
		input["assigneeId"] = nil
	}
	if err := setIssueFields(input, issueFieldsInput{
		Description: in.Description, Priority: in.Priority, AssigneeID: in.AssigneeID, StateID: in.StateID,
		LabelIDs: in.LabelIDs, ProjectID: in.ProjectID, ParentID: in.ParentID, Estimate: in.Estimate, DueDate: in.DueDate,
	}); err != nil {
		return Issue{}, err
	}
	if len(input) == 0 {
		return Issue{}, switchboard.Invalid("arguments", "nothing to change: give at least one field besides issue")
	}
	var data struct {
		IssueUpdate struct {
			Success bool       `json:"success"`
			Issue   *issueNode `json:"issue"`
		} `json:"issueUpdate"`
	}
	if err := query(ctx, c, "UpdateIssue", updateIssueMutation, map[string]any{"id": id, "input": input}, &data); err != nil {
		return Issue{}, err
	}
	if !data.IssueUpdate.Success || data.IssueUpdate.Issue == nil {
		return Issue{}, &providers.UpstreamError{Provider: providerName, Status: 200, Code: switchboard.CodeUpstream, Message: "Linear did not update the issue"}
	}
	return data.IssueUpdate.Issue.toIssue(), nil
}

// AddComment comments on an issue.
// Linear API docs: https://linear.app/developers/graphql
var AddComment = &providers.Operation[AddCommentInput, Comment]{
	Name:  "add_comment",
	Title: "Add comment",
	Description: "Post a Markdown comment on a Linear issue given by identifier (ENG-123) or ID, as this connection's " +
		"user. Each call posts a new comment: do not retry one that succeeded. Returns the new comment with its URL.",
	DocsURL: "https://linear.app/developers/graphql",
	Scopes:  []string{"write"},
	Hints:   providers.Hints{},
	Run:     addComment,
}

// AddCommentInput is the input of add_comment.
type AddCommentInput struct {
	Issue string `json:"issue" jsonschema:"The issue's identifier (e.g. ENG-123) or ID" schema:"minLength=1,example=ENG-123"`
	Body  string `json:"body" jsonschema:"The comment in Markdown" schema:"minLength=1,example=Reproduced on staging; looking into it."`
}

const addCommentMutation = `mutation AddComment($input: CommentCreateInput!) {
  commentCreate(input: $input) {
    success
    comment { id body url createdAt user { name } }
  }
}`

func addComment(ctx context.Context, c *providers.Call, in AddCommentInput) (Comment, error) {
	id, err := checkIssueRef("issue", in.Issue)
	if err != nil {
		return Comment{}, err
	}
	if strings.TrimSpace(in.Body) == "" {
		return Comment{}, switchboard.Invalid("body", "is empty")
	}
	var data struct {
		CommentCreate struct {
			Success bool         `json:"success"`
			Comment *commentNode `json:"comment"`
		} `json:"commentCreate"`
	}
	vars := map[string]any{"input": map[string]any{"issueId": id, "body": in.Body}}
	if err := query(ctx, c, "AddComment", addCommentMutation, vars, &data); err != nil {
		return Comment{}, err
	}
	if !data.CommentCreate.Success || data.CommentCreate.Comment == nil {
		return Comment{}, &providers.UpstreamError{Provider: providerName, Status: 200, Code: switchboard.CodeUpstream, Message: "Linear did not create the comment"}
	}
	return data.CommentCreate.Comment.toComment(), nil
}
