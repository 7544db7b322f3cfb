package jira

import (
	"context"
	"net/http"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListTransitions lists the workflow transitions an issue can take now.
// Jira API docs: https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-issueidorkey-transitions-get
var ListTransitions = &providers.Operation[ListTransitionsInput, TransitionList]{
	Name:  "list_transitions",
	Title: "List transitions",
	Description: "List the workflow transitions a Jira issue (PROJ-123) can take from its current status, for the " +
		"connected user: each transition's ID, name (e.g. Start Progress, Done) and the status it leads to. Call it " +
		"before transition_issue, which needs the ID. Returns the available transitions.",
	DocsURL: "https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-issueidorkey-transitions-get",
	Scopes:  []string{"read:jira-work"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listTransitions,
}

// ListTransitionsInput is the input of list_transitions.
type ListTransitionsInput struct {
	Key string `json:"key" jsonschema:"The issue key (or numeric ID)" schema:"minLength=1,example=PROJ-123"`
}

// TransitionList is the transitions available to an issue.
type TransitionList struct {
	Transitions []Transition `json:"transitions" jsonschema:"The transitions the issue can take now"`
}

// Transition is one workflow transition.
type Transition struct {
	ID             string `json:"id" jsonschema:"The transition's ID, for transition_issue"`
	Name           string `json:"name" jsonschema:"The transition's name, e.g. Start Progress"`
	ToStatus       string `json:"to_status" jsonschema:"The status the issue moves to"`
	StatusCategory string `json:"status_category" jsonschema:"That status's category: new, indeterminate or done"`
}

func listTransitions(ctx context.Context, c *providers.Call, in ListTransitionsInput) (TransitionList, error) {
	p, _, err := issuePath("key", in.Key, "/transitions")
	if err != nil {
		return TransitionList{}, err
	}
	var r struct {
		Transitions []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
			To   struct {
				Name           string `json:"name"`
				StatusCategory struct {
					Key string `json:"key"`
				} `json:"statusCategory"`
			} `json:"to"`
		} `json:"transitions"`
	}
	if err := (request{method: http.MethodGet, path: p}).do(ctx, c, &r); err != nil {
		return TransitionList{}, err
	}
	out := TransitionList{Transitions: make([]Transition, 0, len(r.Transitions))}
	for _, t := range r.Transitions {
		out.Transitions = append(out.Transitions, Transition{ID: t.ID, Name: t.Name, ToStatus: t.To.Name, StatusCategory: t.To.StatusCategory.Key})
	}
	return out, nil
}

// TransitionIssue moves an issue through its workflow.
// Jira API docs: https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-issueidorkey-transitions-post
var TransitionIssue = &providers.Operation[TransitionIssueInput, TransitionedIssue]{
	Name:  "transition_issue",
	Title: "Transition issue",
	Description: "Change a Jira issue's status by taking a workflow transition: transition_id comes from " +
		"list_transitions for the same issue (transitions differ by workflow and current status). Optionally adds a " +
		"plain-text comment with the change. Returns the issue's key and the transition taken.",
	DocsURL: "https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-issueidorkey-transitions-post",
	Scopes:  []string{"write:jira-work"},
	// A transition leads away from the current status, so a second call would fail or
	// move the issue further: not idempotent, and so never retried.
	Hints: providers.Hints{},
	Run:   transitionIssue,
}

// TransitionIssueInput is the input of transition_issue.
type TransitionIssueInput struct {
	Key          string  `json:"key" jsonschema:"The issue key (or numeric ID)" schema:"minLength=1,example=PROJ-123"`
	TransitionID string  `json:"transition_id" jsonschema:"The transition's ID from list_transitions" schema:"minLength=1,example=31,pattern=^[0-9]+$"`
	Comment      *string `json:"comment,omitempty" jsonschema:"A plain-text comment to add with the transition" schema:"example=Done in release 2.4."`
}

// TransitionedIssue says what transition_issue did.
type TransitionedIssue struct {
	Key          string `json:"key" jsonschema:"The issue's key"`
	TransitionID string `json:"transition_id" jsonschema:"The transition taken"`
	URL          string `json:"url,omitempty" jsonschema:"The issue's address on the Jira site"`
}

func transitionIssue(ctx context.Context, c *providers.Call, in TransitionIssueInput) (TransitionedIssue, error) {
	p, key, err := issuePath("key", in.Key, "/transitions")
	if err != nil {
		return TransitionedIssue{}, err
	}
	id := strings.TrimSpace(in.TransitionID)
	if id == "" || strings.Trim(id, "0123456789") != "" {
		return TransitionedIssue{}, switchboard.Invalid("transition_id", "must be a transition ID (digits) from list_transitions")
	}
	body := map[string]any{"transition": map[string]any{"id": id}}
	if in.Comment != nil && strings.TrimSpace(*in.Comment) != "" {
		body["update"] = map[string]any{"comment": []any{map[string]any{"add": map[string]any{"body": adfFromText(*in.Comment)}}}}
	}
	if err := (request{method: http.MethodPost, path: p, body: body, fields: map[string]string{"": "transition_id", "comment": "comment"}}).do(ctx, c, nil); err != nil {
		return TransitionedIssue{}, err
	}
	return TransitionedIssue{Key: key, TransitionID: id, URL: browseURL(c, key)}, nil
}
