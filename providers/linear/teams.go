package linear

import (
	"context"
	"strings"

	"github.com/switchboard-hub/switchboard/providers"
)

// ListTeams lists the teams with their workflow states.
// Linear API docs: https://linear.app/developers/graphql
var ListTeams = &providers.Operation[ListTeamsInput, TeamList]{
	Name:  "list_teams",
	Title: "List teams",
	Description: "List the Linear teams this connection can see, each with its key (the ENG in ENG-123), ID and " +
		"workflow states (ID, name such as In Progress, and type). Use it to find the team for create_issue or " +
		"list_issues, and the state_id that update_issue needs to move an issue. Returns the teams and next_cursor " +
		"when more follow.",
	DocsURL: "https://linear.app/developers/graphql",
	Scopes:  []string{"read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listTeams,
}

// ListTeamsInput is the input of list_teams.
type ListTeamsInput struct {
	providers.PageInput
}

// TeamList is one page of teams.
type TeamList struct {
	Teams      []Team `json:"teams" jsonschema:"The teams of this page"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

// Team is a Linear team and its workflow.
type Team struct {
	ID          string          `json:"id" jsonschema:"The team's ID"`
	Key         string          `json:"key" jsonschema:"The team's key, the prefix of its issue identifiers (ENG)"`
	Name        string          `json:"name" jsonschema:"The team's name"`
	Description string          `json:"description,omitempty" jsonschema:"The team's description"`
	States      []WorkflowState `json:"states" jsonschema:"The team's workflow states, in board order"`
}

// WorkflowState is one state of a team's workflow.
type WorkflowState struct {
	ID   string `json:"id" jsonschema:"The state's ID, for update_issue's state_id"`
	Name string `json:"name" jsonschema:"The state's name, e.g. In Progress"`
	Type string `json:"type" jsonschema:"The state's category: triage, backlog, unstarted, started, completed or canceled"`
}

const listTeamsQuery = `query ListTeams($first: Int!, $after: String) {
  teams(first: $first, after: $after) {
    nodes {
      id
      key
      name
      description
      states { nodes { id name type position } }
    }
    pageInfo { hasNextPage endCursor }
  }
}`

func listTeams(ctx context.Context, c *providers.Call, in ListTeamsInput) (TeamList, error) {
	vars := map[string]any{}
	if err := pageVars(vars, in.PageInput); err != nil {
		return TeamList{}, err
	}
	var data struct {
		Teams struct {
			Nodes []struct {
				ID          string  `json:"id"`
				Key         string  `json:"key"`
				Name        string  `json:"name"`
				Description *string `json:"description"`
				States      struct {
					Nodes []struct {
						ID       string  `json:"id"`
						Name     string  `json:"name"`
						Type     string  `json:"type"`
						Position float64 `json:"position"`
					} `json:"nodes"`
				} `json:"states"`
			} `json:"nodes"`
			PageInfo pageInfo `json:"pageInfo"`
		} `json:"teams"`
	}
	if err := query(ctx, c, "ListTeams", listTeamsQuery, vars, &data); err != nil {
		return TeamList{}, err
	}
	out := TeamList{Teams: make([]Team, 0, len(data.Teams.Nodes)), NextCursor: data.Teams.PageInfo.next()}
	for _, n := range data.Teams.Nodes {
		t := Team{ID: n.ID, Key: n.Key, Name: n.Name, States: []WorkflowState{}}
		if n.Description != nil {
			t.Description = *n.Description
		}
		states := n.States.Nodes
		// Board order: by position, which Linear does not sort by itself.
		for i := 1; i < len(states); i++ {
			for j := i; j > 0 && states[j].Position < states[j-1].Position; j-- {
				states[j], states[j-1] = states[j-1], states[j]
			}
		}
		for _, s := range states {
			t.States = append(t.States, WorkflowState{ID: s.ID, Name: s.Name, Type: s.Type})
		}
		out.Teams = append(out.Teams, t)
	}
	return out, nil
}

// ListProjects lists projects.
// Linear API docs: https://linear.app/developers/graphql
var ListProjects = &providers.Operation[ListProjectsInput, ProjectList]{
	Name:  "list_projects",
	Title: "List projects",
	Description: "List Linear projects, most recently updated first, optionally only those whose name contains name. " +
		"Use it to find a project's ID for create_issue or update_issue, or its name for list_issues. Returns each " +
		"project's ID, name, state, progress, lead, target date and URL, and next_cursor when more follow.",
	DocsURL: "https://linear.app/developers/graphql",
	Scopes:  []string{"read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listProjects,
}

// ListProjectsInput is the input of list_projects.
type ListProjectsInput struct {
	Name *string `json:"name,omitempty" jsonschema:"Only projects whose name contains this, case-insensitive" schema:"minLength=1,example=launch"`
	providers.PageInput
}

// ProjectList is one page of projects.
type ProjectList struct {
	Projects   []Project `json:"projects" jsonschema:"The projects of this page"`
	NextCursor string    `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

// Project is a Linear project.
type Project struct {
	ID          string  `json:"id" jsonschema:"The project's ID"`
	Name        string  `json:"name" jsonschema:"The project's name"`
	Description string  `json:"description,omitempty" jsonschema:"The project's short description"`
	State       string  `json:"state" jsonschema:"The project's state: backlog, planned, started, paused, completed or canceled"`
	Progress    float64 `json:"progress" jsonschema:"Share of the project's issues done, from 0 to 1"`
	Lead        string  `json:"lead,omitempty" jsonschema:"The project lead's name, when set"`
	StartDate   string  `json:"start_date,omitempty" jsonschema:"Planned start date (YYYY-MM-DD), when set"`
	TargetDate  string  `json:"target_date,omitempty" jsonschema:"Target date (YYYY-MM-DD), when set"`
	URL         string  `json:"url" jsonschema:"The project's address in Linear"`
}

const listProjectsQuery = `query ListProjects($filter: ProjectFilter, $first: Int!, $after: String) {
  projects(filter: $filter, first: $first, after: $after, orderBy: updatedAt) {
    nodes { id name description state progress startDate targetDate url lead { name } }
    pageInfo { hasNextPage endCursor }
  }
}`

func listProjects(ctx context.Context, c *providers.Call, in ListProjectsInput) (ProjectList, error) {
	vars := map[string]any{}
	if in.Name != nil && strings.TrimSpace(*in.Name) != "" {
		vars["filter"] = map[string]any{"name": map[string]any{"containsIgnoreCase": strings.TrimSpace(*in.Name)}}
	}
	if err := pageVars(vars, in.PageInput); err != nil {
		return ProjectList{}, err
	}
	var data struct {
		Projects struct {
			Nodes []struct {
				ID          string  `json:"id"`
				Name        string  `json:"name"`
				Description string  `json:"description"`
				State       string  `json:"state"`
				Progress    float64 `json:"progress"`
				StartDate   *string `json:"startDate"`
				TargetDate  *string `json:"targetDate"`
				URL         string  `json:"url"`
				Lead        *struct {
					Name string `json:"name"`
				} `json:"lead"`
			} `json:"nodes"`
			PageInfo pageInfo `json:"pageInfo"`
		} `json:"projects"`
	}
	if err := query(ctx, c, "ListProjects", listProjectsQuery, vars, &data); err != nil {
		return ProjectList{}, err
	}
	out := ProjectList{Projects: make([]Project, 0, len(data.Projects.Nodes)), NextCursor: data.Projects.PageInfo.next()}
	for _, n := range data.Projects.Nodes {
		p := Project{ID: n.ID, Name: n.Name, Description: n.Description, State: n.State, Progress: n.Progress, URL: n.URL}
		if n.StartDate != nil {
			p.StartDate = *n.StartDate
		}
		if n.TargetDate != nil {
			p.TargetDate = *n.TargetDate
		}
		if n.Lead != nil {
			p.Lead = n.Lead.Name
		}
		out.Projects = append(out.Projects, p)
	}
	return out, nil
}
