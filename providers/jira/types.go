package jira

import (
	"encoding/json"

	"github.com/switchboard-hub/switchboard/providers"
)

// issueFields are the fields every issue-returning operation asks Jira for.
var issueFields = []string{"summary", "status", "issuetype", "priority", "assignee", "reporter", "project", "labels",
	"created", "updated", "duedate", "parent"}

// Issue is a Jira issue as the tools return it.
type Issue struct {
	Key               string   `json:"key" jsonschema:"The issue key, e.g. PROJ-123; every issue tool takes it"`
	ID                string   `json:"id" jsonschema:"The issue's numeric ID"`
	Summary           string   `json:"summary" jsonschema:"The issue's summary (title)"`
	Status            string   `json:"status" jsonschema:"The status name, e.g. In Progress"`
	StatusCategory    string   `json:"status_category" jsonschema:"The status category: new (To Do), indeterminate (In Progress) or done"`
	IssueType         string   `json:"issue_type" jsonschema:"The issue type, e.g. Bug, Task, Story"`
	Priority          string   `json:"priority,omitempty" jsonschema:"The priority name, e.g. High"`
	Assignee          string   `json:"assignee,omitempty" jsonschema:"The assignee's display name, when assigned"`
	AssigneeAccountID string   `json:"assignee_account_id,omitempty" jsonschema:"The assignee's Atlassian account ID, when assigned"`
	Reporter          string   `json:"reporter,omitempty" jsonschema:"The reporter's display name"`
	ProjectKey        string   `json:"project_key" jsonschema:"The project's key, e.g. PROJ"`
	Parent            string   `json:"parent,omitempty" jsonschema:"The parent issue's key (an epic or, for a sub-task, its issue)"`
	Labels            []string `json:"labels" jsonschema:"Labels"`
	DueDate           string   `json:"due_date,omitempty" jsonschema:"Due date (YYYY-MM-DD), when set"`
	Created           string   `json:"created" jsonschema:"When the issue was created"`
	Updated           string   `json:"updated" jsonschema:"When the issue was last updated"`
	URL               string   `json:"url,omitempty" jsonschema:"The issue's address on the Jira site"`
}

// issueObject is an issue as Jira returns it.
// Jira API docs: https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-issueidorkey-get
type issueObject struct {
	ID     string `json:"id"`
	Key    string `json:"key"`
	Fields struct {
		Summary string `json:"summary"`
		Status  *struct {
			Name           string `json:"name"`
			StatusCategory struct {
				Key string `json:"key"`
			} `json:"statusCategory"`
		} `json:"status"`
		IssueType *struct {
			Name string `json:"name"`
		} `json:"issuetype"`
		Priority *struct {
			Name string `json:"name"`
		} `json:"priority"`
		Assignee *userObject `json:"assignee"`
		Reporter *userObject `json:"reporter"`
		Project  *struct {
			Key string `json:"key"`
		} `json:"project"`
		Parent *struct {
			Key string `json:"key"`
		} `json:"parent"`
		Labels      []string        `json:"labels"`
		DueDate     *string         `json:"duedate"`
		Created     string          `json:"created"`
		Updated     string          `json:"updated"`
		Description json.RawMessage `json:"description"`
		Comment     *struct {
			Comments []commentObject `json:"comments"`
			Total    int             `json:"total"`
		} `json:"comment"`
	} `json:"fields"`
}

// userObject is a Jira user as fields carry it.
type userObject struct {
	AccountID    string `json:"accountId"`
	DisplayName  string `json:"displayName"`
	EmailAddress string `json:"emailAddress"`
	Active       bool   `json:"active"`
	AccountType  string `json:"accountType"`
}

func (o issueObject) toIssue(c *providers.Call) Issue {
	f := o.Fields
	out := Issue{Key: o.Key, ID: o.ID, Summary: f.Summary, Labels: []string{}, Created: f.Created, Updated: f.Updated, URL: browseURL(c, o.Key)}
	if f.Status != nil {
		out.Status, out.StatusCategory = f.Status.Name, f.Status.StatusCategory.Key
	}
	if f.IssueType != nil {
		out.IssueType = f.IssueType.Name
	}
	if f.Priority != nil {
		out.Priority = f.Priority.Name
	}
	if f.Assignee != nil {
		out.Assignee, out.AssigneeAccountID = f.Assignee.DisplayName, f.Assignee.AccountID
	}
	if f.Reporter != nil {
		out.Reporter = f.Reporter.DisplayName
	}
	if f.Project != nil {
		out.ProjectKey = f.Project.Key
	}
	if f.Parent != nil {
		out.Parent = f.Parent.Key
	}
	if f.Labels != nil {
		out.Labels = f.Labels
	}
	if f.DueDate != nil {
		out.DueDate = *f.DueDate
	}
	return out
}

// Comment is a comment on an issue.
type Comment struct {
	ID      string `json:"id" jsonschema:"The comment's ID"`
	Author  string `json:"author" jsonschema:"The author's display name"`
	Body    string `json:"body" jsonschema:"The comment as plain text"`
	Created string `json:"created" jsonschema:"When it was posted"`
	Updated string `json:"updated" jsonschema:"When it was last edited"`
}

// commentObject is a comment as Jira returns it.
type commentObject struct {
	ID      string          `json:"id"`
	Author  *userObject     `json:"author"`
	Body    json.RawMessage `json:"body"`
	Created string          `json:"created"`
	Updated string          `json:"updated"`
}

func (o commentObject) toComment() Comment {
	out := Comment{ID: o.ID, Body: adfText(o.Body), Created: o.Created, Updated: o.Updated}
	if o.Author != nil {
		out.Author = o.Author.DisplayName
	}
	return out
}
