package jira

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListProjects lists the projects the user may browse.
// Jira API docs: https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-projects/#api-rest-api-3-project-search-get
var ListProjects = &providers.Operation[ListProjectsInput, ProjectList]{
	Name:  "list_projects",
	Title: "List projects",
	Description: "List the Jira projects the connected user can browse, optionally only those whose key or name " +
		"contains query. Use it to find the project key for create_issue or for a JQL query in search_issues. Returns " +
		"each project's key, name, type and lead, and next_cursor when more follow.",
	DocsURL: "https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-projects/#api-rest-api-3-project-search-get",
	Scopes:  []string{"read:jira-work"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listProjects,
}

// ListProjectsInput is the input of list_projects.
type ListProjectsInput struct {
	Query *string `json:"query,omitempty" jsonschema:"Only projects whose key or name contains this, case-insensitive" schema:"minLength=1,example=mobile"`
	providers.PageInput
}

// ProjectList is one page of projects.
type ProjectList struct {
	Projects   []Project `json:"projects" jsonschema:"The projects of this page"`
	NextCursor string    `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

// Project is a Jira project.
type Project struct {
	Key  string `json:"key" jsonschema:"The project key, the prefix of its issue keys (PROJ)"`
	ID   string `json:"id" jsonschema:"The project's numeric ID"`
	Name string `json:"name" jsonschema:"The project's name"`
	Type string `json:"type" jsonschema:"The project type: software, service_desk or business"`
	Lead string `json:"lead,omitempty" jsonschema:"The project lead's display name, when Jira includes it"`
}

func listProjects(ctx context.Context, c *providers.Call, in ListProjectsInput) (ProjectList, error) {
	n, err := pageSize(in.PageInput)
	if err != nil {
		return ProjectList{}, err
	}
	pos, err := in.DecodedCursor()
	if err != nil {
		return ProjectList{}, err
	}
	start := 0
	if pos != "" {
		if start, err = strconv.Atoi(pos); err != nil || start < 1 {
			return ProjectList{}, switchboard.Invalid("cursor", "is not a cursor this tool returned; pass next_cursor from the previous page, or omit it")
		}
	}
	q := url.Values{"startAt": {strconv.Itoa(start)}, "maxResults": {strconv.Itoa(n)}, "orderBy": {"key"}, "expand": {"lead"}}
	if in.Query != nil && strings.TrimSpace(*in.Query) != "" {
		q.Set("query", strings.TrimSpace(*in.Query))
	}
	var r struct {
		Values []struct {
			ID             string `json:"id"`
			Key            string `json:"key"`
			Name           string `json:"name"`
			ProjectTypeKey string `json:"projectTypeKey"`
			Lead           *struct {
				DisplayName string `json:"displayName"`
			} `json:"lead"`
		} `json:"values"`
		StartAt    int  `json:"startAt"`
		MaxResults int  `json:"maxResults"`
		IsLast     bool `json:"isLast"`
	}
	if err := (request{method: http.MethodGet, path: "/project/search", query: q}).do(ctx, c, &r); err != nil {
		return ProjectList{}, err
	}
	out := ProjectList{Projects: make([]Project, 0, len(r.Values))}
	for _, v := range r.Values {
		p := Project{Key: v.Key, ID: v.ID, Name: v.Name, Type: v.ProjectTypeKey}
		if v.Lead != nil {
			p.Lead = v.Lead.DisplayName
		}
		out.Projects = append(out.Projects, p)
	}
	if !r.IsLast && len(r.Values) > 0 {
		out.NextCursor = providers.EncodeCursor(strconv.Itoa(start + len(r.Values)))
	}
	return out, nil
}
