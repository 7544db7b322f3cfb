package linear

// issueSelection is what every issue-returning operation asks of an issue.
const issueSelection = `
  id
  identifier
  title
  description
  priority
  priorityLabel
  estimate
  dueDate
  url
  createdAt
  updatedAt
  state { id name type }
  team { id key name }
  assignee { id name email }
  project { id name }
  labels { nodes { id name } }
`

// issueFields is the IssueFields fragment on Issue.
const issueFields = "fragment IssueFields on Issue {" + issueSelection + "}"

// issueSearchFields is the IssueFields fragment on Linear's search result type, which
// carries the same fields as Issue.
const issueSearchFields = "fragment IssueFields on IssueSearchResult {" + issueSelection + "}"

// Issue is a Linear issue as the tools return it.
type Issue struct {
	ID            string   `json:"id" jsonschema:"The issue's ID (a UUID)"`
	Identifier    string   `json:"identifier" jsonschema:"The issue's human identifier, e.g. ENG-123; every issue tool accepts it"`
	Title         string   `json:"title" jsonschema:"The issue's title"`
	Description   string   `json:"description,omitempty" jsonschema:"The issue's description in Markdown"`
	Priority      int      `json:"priority" jsonschema:"Priority: 0 none, 1 urgent, 2 high, 3 medium (normal), 4 low"`
	PriorityLabel string   `json:"priority_label" jsonschema:"The priority's name, e.g. High"`
	Estimate      *float64 `json:"estimate,omitempty" jsonschema:"The estimate in the team's points, when set"`
	DueDate       string   `json:"due_date,omitempty" jsonschema:"Due date (YYYY-MM-DD), when set"`
	State         string   `json:"state" jsonschema:"Workflow state name, e.g. In Progress"`
	StateType     string   `json:"state_type" jsonschema:"Workflow state type: triage, backlog, unstarted, started, completed or canceled"`
	TeamKey       string   `json:"team_key" jsonschema:"The team's key, e.g. ENG"`
	Assignee      string   `json:"assignee,omitempty" jsonschema:"The assignee's name, when assigned"`
	AssigneeEmail string   `json:"assignee_email,omitempty" jsonschema:"The assignee's email, when assigned"`
	Project       string   `json:"project,omitempty" jsonschema:"The project's name, when in one"`
	Labels        []string `json:"labels" jsonschema:"Label names"`
	URL           string   `json:"url" jsonschema:"The issue's address in Linear"`
	CreatedAt     string   `json:"created_at" jsonschema:"When the issue was created (RFC 3339)"`
	UpdatedAt     string   `json:"updated_at" jsonschema:"When the issue was last updated (RFC 3339)"`
}

// issueNode is an issue as the IssueFields fragment selects it.
type issueNode struct {
	ID            string   `json:"id"`
	Identifier    string   `json:"identifier"`
	Title         string   `json:"title"`
	Description   *string  `json:"description"`
	Priority      float64  `json:"priority"`
	PriorityLabel string   `json:"priorityLabel"`
	Estimate      *float64 `json:"estimate"`
	DueDate       *string  `json:"dueDate"`
	URL           string   `json:"url"`
	CreatedAt     string   `json:"createdAt"`
	UpdatedAt     string   `json:"updatedAt"`
	State         *struct {
		ID, Name, Type string
	} `json:"state"`
	Team *struct {
		ID, Key, Name string
	} `json:"team"`
	Assignee *struct {
		ID, Name, Email string
	} `json:"assignee"`
	Project *struct {
		ID, Name string
	} `json:"project"`
	Labels *struct {
		Nodes []struct{ ID, Name string } `json:"nodes"`
	} `json:"labels"`
}

func (n issueNode) toIssue() Issue {
	out := Issue{ID: n.ID, Identifier: n.Identifier, Title: n.Title, Priority: int(n.Priority), PriorityLabel: n.PriorityLabel,
		Estimate: n.Estimate, URL: n.URL, CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt, Labels: []string{}}
	if n.Description != nil {
		out.Description = *n.Description
	}
	if n.DueDate != nil {
		out.DueDate = *n.DueDate
	}
	if n.State != nil {
		out.State, out.StateType = n.State.Name, n.State.Type
	}
	if n.Team != nil {
		out.TeamKey = n.Team.Key
	}
	if n.Assignee != nil {
		out.Assignee, out.AssigneeEmail = n.Assignee.Name, n.Assignee.Email
	}
	if n.Project != nil {
		out.Project = n.Project.Name
	}
	if n.Labels != nil {
		for _, l := range n.Labels.Nodes {
			out.Labels = append(out.Labels, l.Name)
		}
	}
	return out
}

// IssueList is one page of issues.
type IssueList struct {
	Issues     []Issue `json:"issues" jsonschema:"The issues of this page"`
	NextCursor string  `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

// issueConnection is a page of issues as Linear returns it.
type issueConnection struct {
	Nodes    []issueNode `json:"nodes"`
	PageInfo pageInfo    `json:"pageInfo"`
}

func (c issueConnection) toList() IssueList {
	out := IssueList{Issues: make([]Issue, 0, len(c.Nodes)), NextCursor: c.PageInfo.next()}
	for _, n := range c.Nodes {
		out.Issues = append(out.Issues, n.toIssue())
	}
	return out
}
