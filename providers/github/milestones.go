package github

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListMilestones lists a repository's milestones.
// GitHub API docs: https://docs.github.com/rest/issues/milestones#list-milestones
var ListMilestones = &providers.Operation[ListMilestonesInput, ListMilestonesOutput]{
	Name:  "list_milestones",
	Title: "List milestones",
	Description: "List the milestones of a repository, open ones by default, soonest due first: number, title, due date and " +
		"progress (open and closed issue counts). Use a milestone's number for create_issue's milestone. Returns a " +
		"page of them.",
	DocsURL: "https://docs.github.com/rest/issues/milestones#list-milestones",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listMilestones,
}

// CreateMilestone creates a milestone.
// GitHub API docs: https://docs.github.com/rest/issues/milestones#create-a-milestone
var CreateMilestone = &providers.Operation[CreateMilestoneInput, Milestone]{
	Name:  "create_milestone",
	Title: "Create milestone",
	Description: "Create a milestone in a repository to group issues and pull requests toward a goal or date. A title " +
		"already used answers invalid. Needs push access. Returns the milestone with its number (pass it as " +
		"create_issue's milestone).",
	DocsURL: "https://docs.github.com/rest/issues/milestones#create-a-milestone",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{},
	Run:     createMilestone,
}

// ListMilestonesInput is the input of list_milestones.
type ListMilestonesInput struct {
	Owner     string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo      string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	State     *string `json:"state,omitempty" jsonschema:"Which milestones to list by state" schema:"enum=open|closed|all,default=open"`
	Sort      *string `json:"sort,omitempty" jsonschema:"Sort by due date or by completeness" schema:"enum=due_on|completeness,default=due_on"`
	Direction *string `json:"direction,omitempty" jsonschema:"Sort direction" schema:"enum=asc|desc,default=asc"`
	providers.PageInput
}

// ListMilestonesOutput is one page of milestones.
type ListMilestonesOutput struct {
	Milestones []Milestone `json:"milestones" jsonschema:"The milestones on this page"`
	NextCursor string      `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// Milestone is a milestone.
type Milestone struct {
	Number       int    `json:"number" jsonschema:"Milestone number, as create_issue's milestone takes it"`
	Title        string `json:"title" jsonschema:"Title"`
	State        string `json:"state" jsonschema:"open or closed"`
	Description  string `json:"description" jsonschema:"Description; empty when none"`
	OpenIssues   int    `json:"open_issues" jsonschema:"Open issues and pull requests in it"`
	ClosedIssues int    `json:"closed_issues" jsonschema:"Closed issues and pull requests in it"`
	DueOn        string `json:"due_on,omitempty" jsonschema:"Due date (RFC 3339); absent when none"`
	HTMLURL      string `json:"html_url" jsonschema:"Web page of the milestone"`
}

// CreateMilestoneInput is the input of create_milestone.
type CreateMilestoneInput struct {
	Owner       string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo        string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	Title       string  `json:"title" jsonschema:"Milestone title, e.g. v1.0" schema:"minLength=1,maxLength=256,example=v1.0"`
	Description *string `json:"description,omitempty" jsonschema:"What the milestone is for, e.g. First stable release" schema:"maxLength=65536,example=First stable release"`
	DueOn       *string `json:"due_on,omitempty" jsonschema:"Due date, e.g. 2024-12-31T00:00:00Z" schema:"format=date-time,example=2024-12-31T00:00:00Z"`
	State       *string `json:"state,omitempty" jsonschema:"Create it open or already closed" schema:"enum=open|closed,default=open"`
}

// ghMilestoneFull is GitHub's milestone object.
type ghMilestoneFull struct {
	Number       int     `json:"number"`
	Title        string  `json:"title"`
	State        string  `json:"state"`
	Description  *string `json:"description"`
	OpenIssues   int     `json:"open_issues"`
	ClosedIssues int     `json:"closed_issues"`
	DueOn        *string `json:"due_on"`
	HTMLURL      string  `json:"html_url"`
}

func (m ghMilestoneFull) output() Milestone {
	return Milestone{Number: m.Number, Title: m.Title, State: m.State, Description: deref(m.Description), OpenIssues: m.OpenIssues,
		ClosedIssues: m.ClosedIssues, DueOn: deref(m.DueOn), HTMLURL: m.HTMLURL}
}

func listMilestones(ctx context.Context, c *providers.Call, in ListMilestonesInput) (ListMilestonesOutput, error) {
	p, err := repoPath(in.Owner, in.Repo, "milestones")
	if err != nil {
		return ListMilestonesOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListMilestonesOutput{}, err
	}
	setOpt(q, "state", in.State)
	setOpt(q, "sort", in.Sort)
	setOpt(q, "direction", in.Direction)
	var res []ghMilestoneFull
	h, err := request{method: http.MethodGet, path: p, query: q}.do(ctx, c, &res)
	if err != nil {
		return ListMilestonesOutput{}, err
	}
	out := ListMilestonesOutput{Milestones: make([]Milestone, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, m := range res {
		out.Milestones = append(out.Milestones, m.output())
	}
	return out, nil
}

// createMilestoneBody is the JSON body of POST /repos/{owner}/{repo}/milestones.
type createMilestoneBody struct {
	Title       string  `json:"title"`
	State       *string `json:"state,omitempty"`
	Description *string `json:"description,omitempty"`
	DueOn       *string `json:"due_on,omitempty"`
}

func createMilestone(ctx context.Context, c *providers.Call, in CreateMilestoneInput) (Milestone, error) {
	p, err := repoPath(in.Owner, in.Repo, "milestones")
	if err != nil {
		return Milestone{}, err
	}
	if strings.TrimSpace(in.Title) == "" {
		return Milestone{}, switchboard.Invalid("title", "is required and must not be blank")
	}
	if in.DueOn != nil {
		if _, err := time.Parse(time.RFC3339, *in.DueOn); err != nil {
			return Milestone{}, switchboard.Invalid("due_on", "must be an RFC 3339 time such as 2024-12-31T00:00:00Z")
		}
	}
	var res ghMilestoneFull
	body := createMilestoneBody{Title: in.Title, State: in.State, Description: in.Description, DueOn: in.DueOn}
	if _, err := (request{method: http.MethodPost, path: p, body: body}).do(ctx, c, &res); err != nil {
		return Milestone{}, err
	}
	return res.output(), nil
}
