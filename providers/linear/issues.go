package linear

import (
	"context"
	"net/mail"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListIssues lists issues filtered by team, state, assignee, project and label.
// Linear API docs: https://linear.app/developers/filtering
var ListIssues = &providers.Operation[ListIssuesInput, IssueList]{
	Name:  "list_issues",
	Title: "List issues",
	Description: "List Linear issues, most recently updated first, narrowed by team (key such as ENG), workflow state " +
		"(a name such as In Progress, or a state_type such as started), assignee (me, an email, or none for " +
		"unassigned), project and label. Use it to browse a backlog or someone's work; to find issues by words in " +
		"their text use search_issues. Returns each issue's identifier (ENG-123), title, state, assignee, priority and " +
		"labels, and next_cursor when more follow.",
	DocsURL: "https://linear.app/developers/filtering",
	Scopes:  []string{"read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listIssues,
}

// ListIssuesInput is the input of list_issues.
type ListIssuesInput struct {
	Team            *string `json:"team,omitempty" jsonschema:"Team key (e.g. ENG) or team ID; list_teams gives them" schema:"minLength=1,example=ENG"`
	State           *string `json:"state,omitempty" jsonschema:"Workflow state name, case-insensitive" schema:"minLength=1,example=In Progress"`
	StateType       *string `json:"state_type,omitempty" jsonschema:"Workflow state category; open work is triage, backlog, unstarted and started" schema:"enum=triage|backlog|unstarted|started|completed|canceled"`
	Assignee        *string `json:"assignee,omitempty" jsonschema:"me (this connection's user), none (unassigned), an email address or a user ID" schema:"minLength=1,example=me"`
	Project         *string `json:"project,omitempty" jsonschema:"Project name (case-insensitive) or project ID; list_projects gives them" schema:"minLength=1,example=Mobile launch"`
	Label           *string `json:"label,omitempty" jsonschema:"Only issues with this label name, case-insensitive" schema:"minLength=1,example=Bug"`
	IncludeArchived *bool   `json:"include_archived,omitempty" jsonschema:"Include archived issues" schema:"default=false"`
	providers.PageInput
}

// listIssuesQuery lists issues with a filter.
const listIssuesQuery = `query ListIssues($filter: IssueFilter, $first: Int!, $after: String, $includeArchived: Boolean) {
  issues(filter: $filter, first: $first, after: $after, includeArchived: $includeArchived, orderBy: updatedAt) {
    nodes { ...IssueFields }
    pageInfo { hasNextPage endCursor }
  }
}
` + issueFields

func listIssues(ctx context.Context, c *providers.Call, in ListIssuesInput) (IssueList, error) {
	filter, err := issueFilter(in)
	if err != nil {
		return IssueList{}, err
	}
	vars := map[string]any{}
	if len(filter) > 0 {
		vars["filter"] = filter
	}
	if in.IncludeArchived != nil {
		vars["includeArchived"] = *in.IncludeArchived
	}
	if err := pageVars(vars, in.PageInput); err != nil {
		return IssueList{}, err
	}
	var data struct {
		Issues issueConnection `json:"issues"`
	}
	if err := query(ctx, c, "ListIssues", listIssuesQuery, vars, &data); err != nil {
		return IssueList{}, err
	}
	return data.Issues.toList(), nil
}

// issueFilter builds Linear's IssueFilter from list_issues' arguments.
func issueFilter(in ListIssuesInput) (map[string]any, error) {
	f := map[string]any{}
	if in.Team != nil {
		t := strings.TrimSpace(*in.Team)
		switch {
		case uuidPattern.MatchString(t):
			f["team"] = map[string]any{"id": map[string]any{"eq": strings.ToLower(t)}}
		case teamKeyPattern.MatchString(t):
			f["team"] = map[string]any{"key": map[string]any{"eqIgnoreCase": t}}
		default:
			return nil, switchboard.Invalid("team", "must be a team key such as ENG or a team ID; list_teams gives them")
		}
	}
	state := map[string]any{}
	if in.State != nil {
		state["name"] = map[string]any{"eqIgnoreCase": strings.TrimSpace(*in.State)}
	}
	if in.StateType != nil {
		state["type"] = map[string]any{"eq": *in.StateType}
	}
	if len(state) > 0 {
		f["state"] = state
	}
	if in.Assignee != nil {
		a := strings.TrimSpace(*in.Assignee)
		switch {
		case strings.EqualFold(a, "me"):
			f["assignee"] = map[string]any{"isMe": map[string]any{"eq": true}}
		case strings.EqualFold(a, "none"):
			f["assignee"] = map[string]any{"null": true}
		case uuidPattern.MatchString(a):
			f["assignee"] = map[string]any{"id": map[string]any{"eq": strings.ToLower(a)}}
		case isEmail(a):
			f["assignee"] = map[string]any{"email": map[string]any{"eqIgnoreCase": a}}
		default:
			return nil, switchboard.Invalid("assignee", "must be me, none, an email address or a user ID")
		}
	}
	if in.Project != nil {
		p := strings.TrimSpace(*in.Project)
		if uuidPattern.MatchString(p) {
			f["project"] = map[string]any{"id": map[string]any{"eq": strings.ToLower(p)}}
		} else {
			f["project"] = map[string]any{"name": map[string]any{"eqIgnoreCase": p}}
		}
	}
	if in.Label != nil {
		f["labels"] = map[string]any{"some": map[string]any{"name": map[string]any{"eqIgnoreCase": strings.TrimSpace(*in.Label)}}}
	}
	return f, nil
}

func isEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}

// SearchIssues finds issues by words in their title, description or comments.
// Linear API docs: https://linear.app/developers/graphql
var SearchIssues = &providers.Operation[SearchIssuesInput, IssueList]{
	Name:  "search_issues",
	Title: "Search issues",
	Description: "Full-text search of Linear issues: finds issues whose title or description (and, with " +
		"include_comments, comments) match the words in query, best matches first, optionally within one team. Use " +
		"it when you know what an issue is about but not its identifier; to filter by state, assignee or project use " +
		"list_issues. Returns matching issues with identifier, title, state and assignee, and next_cursor when more follow.",
	DocsURL: "https://linear.app/developers/graphql",
	Scopes:  []string{"read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     searchIssues,
}

// SearchIssuesInput is the input of search_issues.
type SearchIssuesInput struct {
	Query           string  `json:"query" jsonschema:"Words to search for" schema:"minLength=1,maxLength=512,example=login timeout"`
	TeamID          *string `json:"team_id,omitempty" jsonschema:"Search only this team's issues (a team ID from list_teams)" schema:"minLength=1,example=9cfb482a-81e3-4154-b5b9-2c805e70a02d"`
	IncludeComments *bool   `json:"include_comments,omitempty" jsonschema:"Also match the text of comments" schema:"default=false"`
	IncludeArchived *bool   `json:"include_archived,omitempty" jsonschema:"Include archived issues" schema:"default=false"`
	providers.PageInput
}

const searchIssuesQuery = `query SearchIssues($term: String!, $first: Int!, $after: String, $teamId: String, $includeComments: Boolean, $includeArchived: Boolean) {
  searchIssues(term: $term, first: $first, after: $after, teamId: $teamId, includeComments: $includeComments, includeArchived: $includeArchived) {
    nodes { ...IssueFields }
    pageInfo { hasNextPage endCursor }
  }
}
` + issueSearchFields

func searchIssues(ctx context.Context, c *providers.Call, in SearchIssuesInput) (IssueList, error) {
	term := strings.TrimSpace(in.Query)
	if term == "" {
		return IssueList{}, switchboard.Invalid("query", "is empty; give words to search for")
	}
	vars := map[string]any{"term": term}
	if in.TeamID != nil {
		if err := checkUUID("team_id", *in.TeamID); err != nil {
			return IssueList{}, err
		}
		vars["teamId"] = strings.ToLower(strings.TrimSpace(*in.TeamID))
	}
	if in.IncludeComments != nil {
		vars["includeComments"] = *in.IncludeComments
	}
	if in.IncludeArchived != nil {
		vars["includeArchived"] = *in.IncludeArchived
	}
	if err := pageVars(vars, in.PageInput); err != nil {
		return IssueList{}, err
	}
	var data struct {
		SearchIssues issueConnection `json:"searchIssues"`
	}
	if err := query(ctx, c, "SearchIssues", searchIssuesQuery, vars, &data); err != nil {
		return IssueList{}, err
	}
	return data.SearchIssues.toList(), nil
}

// GetIssue reads one issue with its description and latest comments.
// Linear API docs: https://linear.app/developers/graphql
var GetIssue = &providers.Operation[GetIssueInput, IssueDetail]{
	Name:  "get_issue",
	Title: "Get issue",
	Description: "Read one Linear issue by its identifier (ENG-123) or ID: title, Markdown description, state, " +
		"assignee, priority, labels, project, and its latest comments (up to 50, oldest first). Use it before " +
		"updating or commenting on an issue. Returns the issue and its comments.",
	DocsURL: "https://linear.app/developers/graphql",
	Scopes:  []string{"read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getIssue,
}

// GetIssueInput is the input of get_issue.
type GetIssueInput struct {
	Issue string `json:"issue" jsonschema:"The issue's identifier (e.g. ENG-123) or ID" schema:"minLength=1,example=ENG-123"`
}

// IssueDetail is an issue with its comments.
type IssueDetail struct {
	Issue
	Comments []Comment `json:"comments" jsonschema:"The latest comments (up to 50), oldest first"`
}

// Comment is a comment on an issue.
type Comment struct {
	ID        string `json:"id" jsonschema:"The comment's ID"`
	Body      string `json:"body" jsonschema:"The comment in Markdown"`
	Author    string `json:"author,omitempty" jsonschema:"The author's name (empty for integrations)"`
	URL       string `json:"url" jsonschema:"The comment's address in Linear"`
	CreatedAt string `json:"created_at" jsonschema:"When it was posted (RFC 3339)"`
}

type commentNode struct {
	ID        string `json:"id"`
	Body      string `json:"body"`
	URL       string `json:"url"`
	CreatedAt string `json:"createdAt"`
	User      *struct {
		Name string `json:"name"`
	} `json:"user"`
}

func (n commentNode) toComment() Comment {
	out := Comment{ID: n.ID, Body: n.Body, URL: n.URL, CreatedAt: n.CreatedAt}
	if n.User != nil {
		out.Author = n.User.Name
	}
	return out
}

const getIssueQuery = `query GetIssue($id: String!) {
  issue(id: $id) {
    ...IssueFields
    comments(last: 50) { nodes { id body url createdAt user { name } } }
  }
}
` + issueFields

func getIssue(ctx context.Context, c *providers.Call, in GetIssueInput) (IssueDetail, error) {
	id, err := checkIssueRef("issue", in.Issue)
	if err != nil {
		return IssueDetail{}, err
	}
	var data struct {
		Issue *struct {
			issueNode
			Comments struct {
				Nodes []commentNode `json:"nodes"`
			} `json:"comments"`
		} `json:"issue"`
	}
	if err := query(ctx, c, "GetIssue", getIssueQuery, map[string]any{"id": id}, &data); err != nil {
		return IssueDetail{}, err
	}
	if data.Issue == nil {
		return IssueDetail{}, &providers.UpstreamError{Provider: providerName, Status: 200, Code: switchboard.CodeNotFound,
			Message: "no issue " + id + " is visible to this connection"}
	}
	out := IssueDetail{Issue: data.Issue.toIssue(), Comments: []Comment{}}
	for _, n := range data.Issue.Comments.Nodes {
		out.Comments = append(out.Comments, n.toComment())
	}
	return out, nil
}
