package github

import (
	"context"
	"net/http"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListLabels lists a repository's labels.
// GitHub API docs: https://docs.github.com/rest/issues/labels#list-labels-for-a-repository
var ListLabels = &providers.Operation[RepoPageInput, ListLabelsOutput]{
	Name:  "list_labels",
	Title: "List labels",
	Description: "List the labels defined in a repository (name, color, description), to pick existing names for " +
		"create_issue, update_issue, add_labels_to_issue or a list_issues filter. Returns a page of them.",
	DocsURL: "https://docs.github.com/rest/issues/labels#list-labels-for-a-repository",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listLabels,
}

// CreateLabel defines a new label.
// GitHub API docs: https://docs.github.com/rest/issues/labels#create-a-label
var CreateLabel = &providers.Operation[CreateLabelInput, Label]{
	Name:  "create_label",
	Title: "Create label",
	Description: "Define a new label in a repository so issues and pull requests can carry it. A name that already " +
		"exists answers invalid (\"already_exists\" on name); use list_labels first. Needs push access. Returns the label.",
	DocsURL: "https://docs.github.com/rest/issues/labels#create-a-label",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{},
	Run:     createLabel,
}

// AddLabelsToIssue adds labels to an issue or pull request.
// GitHub API docs: https://docs.github.com/rest/issues/labels#add-labels-to-an-issue
var AddLabelsToIssue = &providers.Operation[AddLabelsInput, IssueLabelsOutput]{
	Name:  "add_labels_to_issue",
	Title: "Add labels to issue",
	Description: "Add labels to an issue or pull request, keeping the labels it already has (unlike update_issue, which " +
		"replaces the whole set). A name the repository does not define yet is created with a default color. Adding a " +
		"label twice changes nothing. Returns every label the issue now carries.",
	DocsURL: "https://docs.github.com/rest/issues/labels#add-labels-to-an-issue",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{Idempotent: true},
	Run:     addLabelsToIssue,
}

// ListLabelsOutput is one page of labels.
type ListLabelsOutput struct {
	Labels     []Label `json:"labels" jsonschema:"The labels on this page"`
	NextCursor string  `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// Label is a label of a repository.
type Label struct {
	Name        string `json:"name" jsonschema:"Label name, as issues carry it"`
	Color       string `json:"color" jsonschema:"Hex color without #, e.g. f29513"`
	Description string `json:"description" jsonschema:"Description; empty when none"`
	Default     bool   `json:"default" jsonschema:"True for one of GitHub's default labels"`
}

// CreateLabelInput is the input of create_label.
type CreateLabelInput struct {
	Owner       string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo        string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	Name        string  `json:"name" jsonschema:"Label name; emoji allowed, e.g. needs triage" schema:"minLength=1,maxLength=50,example=needs triage"`
	Color       *string `json:"color,omitempty" jsonschema:"Hex color without #; omit for a default, e.g. f29513" schema:"example=f29513,pattern=^[0-9a-fA-F]{6}$"`
	Description *string `json:"description,omitempty" jsonschema:"Short description, e.g. Something isn't working" schema:"maxLength=100,example=Something isn't working"`
}

// AddLabelsInput is the input of add_labels_to_issue.
type AddLabelsInput struct {
	Owner       string   `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo        string   `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	IssueNumber int      `json:"issue_number" jsonschema:"Number of the issue or pull request, as in #1347" schema:"minimum=1,example=1347"`
	Labels      []string `json:"labels" jsonschema:"Label names to add" schema:"minItems=1,maxItems=100"`
}

// IssueLabelsOutput is the labels an issue carries.
type IssueLabelsOutput struct {
	Labels []Label `json:"labels" jsonschema:"Every label the issue now carries"`
}

// ghLabelFull is GitHub's label object.
type ghLabelFull struct {
	Name        string  `json:"name"`
	Color       string  `json:"color"`
	Description *string `json:"description"`
	Default     bool    `json:"default"`
}

func (l ghLabelFull) output() Label {
	return Label{Name: l.Name, Color: l.Color, Description: deref(l.Description), Default: l.Default}
}

func labelList(ls []ghLabelFull) []Label {
	out := make([]Label, 0, len(ls))
	for _, l := range ls {
		out = append(out, l.output())
	}
	return out
}

func listLabels(ctx context.Context, c *providers.Call, in RepoPageInput) (ListLabelsOutput, error) {
	p, err := repoPath(in.Owner, in.Repo, "labels")
	if err != nil {
		return ListLabelsOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListLabelsOutput{}, err
	}
	var res []ghLabelFull
	h, err := request{method: http.MethodGet, path: p, query: q}.do(ctx, c, &res)
	if err != nil {
		return ListLabelsOutput{}, err
	}
	return ListLabelsOutput{Labels: labelList(res), NextCursor: nextCursor(h, q)}, nil
}

// createLabelBody is the JSON body of POST /repos/{owner}/{repo}/labels.
type createLabelBody struct {
	Name        string  `json:"name"`
	Color       *string `json:"color,omitempty"`
	Description *string `json:"description,omitempty"`
}

func createLabel(ctx context.Context, c *providers.Call, in CreateLabelInput) (Label, error) {
	p, err := repoPath(in.Owner, in.Repo, "labels")
	if err != nil {
		return Label{}, err
	}
	if strings.TrimSpace(in.Name) == "" {
		return Label{}, switchboard.Invalid("name", "is required and must not be blank")
	}
	var res ghLabelFull
	body := createLabelBody{Name: in.Name, Color: in.Color, Description: in.Description}
	if _, err := (request{method: http.MethodPost, path: p, body: body}).do(ctx, c, &res); err != nil {
		return Label{}, err
	}
	return res.output(), nil
}

func addLabelsToIssue(ctx context.Context, c *providers.Call, in AddLabelsInput) (IssueLabelsOutput, error) {
	p, err := issuePath(in.Owner, in.Repo, in.IssueNumber, "labels")
	if err != nil {
		return IssueLabelsOutput{}, err
	}
	if len(in.Labels) == 0 {
		return IssueLabelsOutput{}, switchboard.Invalid("labels", "give at least one label name")
	}
	for _, l := range in.Labels {
		if strings.TrimSpace(l) == "" {
			return IssueLabelsOutput{}, switchboard.Invalid("labels", "label names must not be blank")
		}
	}
	var res []ghLabelFull
	if _, err := (request{method: http.MethodPost, path: p, body: map[string][]string{"labels": in.Labels}}).do(ctx, c, &res); err != nil {
		return IssueLabelsOutput{}, err
	}
	return IssueLabelsOutput{Labels: labelList(res)}, nil
}
