package jira

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// SearchIssues finds issues with JQL.
// Jira API docs: https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issue-search/#api-rest-api-3-search-jql-post
var SearchIssues = &providers.Operation[SearchIssuesInput, IssueList]{
	Name:  "search_issues",
	Title: "Search issues (JQL)",
	Description: "Find Jira issues with a JQL query, e.g. project = PROJ AND status = \"In Progress\" ORDER BY updated " +
		"DESC, or assignee = currentUser() AND resolution = Unresolved, or text ~ \"login timeout\". The query must " +
		"restrict the search (a project, assignee, date or text condition): Jira refuses unbounded queries. Use it to " +
		"list, filter or find issues; use get_issue for one issue's description and comments. Returns each issue's " +
		"key, summary, status, type, priority, assignee and labels, and next_cursor when more follow.",
	DocsURL: "https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issue-search/#api-rest-api-3-search-jql-post",
	Scopes:  []string{"read:jira-work"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     searchIssues,
}

// SearchIssuesInput is the input of search_issues.
type SearchIssuesInput struct {
	JQL string `json:"jql" jsonschema:"The JQL query; it must restrict the search (project, assignee, text, date…)" schema:"minLength=1,maxLength=10000,example=project = PROJ AND statusCategory != Done ORDER BY updated DESC"`
	providers.PageInput
}

// IssueList is one page of issues.
type IssueList struct {
	Issues     []Issue `json:"issues" jsonschema:"The issues of this page"`
	NextCursor string  `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

// Page sizes: the default and the most this provider asks Jira for at once.
const (
	defaultPageSize = 30
	maxPageSize     = 100
)

func pageSize(p providers.PageInput) (int, error) {
	n := p.LimitOr(defaultPageSize)
	if n < 1 || n > maxPageSize {
		return 0, switchboard.Invalid("limit", "must be between 1 and "+strconv.Itoa(maxPageSize))
	}
	return n, nil
}

func searchIssues(ctx context.Context, c *providers.Call, in SearchIssuesInput) (IssueList, error) {
	jql := strings.TrimSpace(in.JQL)
	if jql == "" {
		return IssueList{}, switchboard.Invalid("jql", "is empty")
	}
	n, err := pageSize(in.PageInput)
	if err != nil {
		return IssueList{}, err
	}
	token, err := in.DecodedCursor()
	if err != nil {
		return IssueList{}, err
	}
	body := map[string]any{"jql": jql, "maxResults": n, "fields": issueFields}
	if token != "" {
		body["nextPageToken"] = token
	}
	var r struct {
		Issues        []issueObject `json:"issues"`
		NextPageToken string        `json:"nextPageToken"`
		IsLast        *bool         `json:"isLast"`
	}
	if err := (request{method: http.MethodPost, path: "/search/jql", body: body, fields: map[string]string{"": "jql"}}).do(ctx, c, &r); err != nil {
		return IssueList{}, err
	}
	out := IssueList{Issues: make([]Issue, 0, len(r.Issues))}
	for _, o := range r.Issues {
		out.Issues = append(out.Issues, o.toIssue(c))
	}
	if r.NextPageToken != "" && (r.IsLast == nil || !*r.IsLast) {
		out.NextCursor = providers.EncodeCursor(r.NextPageToken)
	}
	return out, nil
}

// GetIssue reads one issue with its description and comments.
// Jira API docs: https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-issueidorkey-get
var GetIssue = &providers.Operation[GetIssueInput, IssueDetail]{
	Name:  "get_issue",
	Title: "Get issue",
	Description: "Read one Jira issue by key (PROJ-123): summary, status, type, priority, assignee, reporter, labels, " +
		"parent, due date, its description as plain text, and its comments (oldest first). Use it before updating, " +
		"commenting on or transitioning an issue. Returns the issue with its description and comments.",
	DocsURL: "https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-issueidorkey-get",
	Scopes:  []string{"read:jira-work"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getIssue,
}

// GetIssueInput is the input of get_issue.
type GetIssueInput struct {
	Key string `json:"key" jsonschema:"The issue key (or numeric ID)" schema:"minLength=1,example=PROJ-123"`
}

// IssueDetail is an issue with its description and comments.
type IssueDetail struct {
	Issue
	Description   string    `json:"description" jsonschema:"The description as plain text"`
	Comments      []Comment `json:"comments" jsonschema:"The comments Jira returned with the issue, oldest first"`
	CommentsTotal int       `json:"comments_total" jsonschema:"How many comments the issue has in all"`
}

func getIssue(ctx context.Context, c *providers.Call, in GetIssueInput) (IssueDetail, error) {
	p, _, err := issuePath("key", in.Key, "")
	if err != nil {
		return IssueDetail{}, err
	}
	q := url.Values{"fields": {strings.Join(append(append([]string(nil), issueFields...), "description", "comment"), ",")}}
	var o issueObject
	if err := (request{method: http.MethodGet, path: p, query: q}).do(ctx, c, &o); err != nil {
		return IssueDetail{}, err
	}
	out := IssueDetail{Issue: o.toIssue(c), Description: adfText(o.Fields.Description), Comments: []Comment{}}
	if o.Fields.Comment != nil {
		for _, cm := range o.Fields.Comment.Comments {
			out.Comments = append(out.Comments, cm.toComment())
		}
		out.CommentsTotal = o.Fields.Comment.Total
	}
	return out, nil
}

// CreateIssue creates an issue.
// Jira API docs: https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-post
var CreateIssue = &providers.Operation[CreateIssueInput, CreatedIssue]{
	Name:  "create_issue",
	Title: "Create issue",
	Description: "Create a Jira issue in a project (its key, from list_projects) with a summary, an issue type name " +
		"(Task, Bug, Story, Epic, Sub-task: the project's own types), and optionally a plain-text description, " +
		"assignee (an Atlassian account ID), priority name, labels, parent (an epic, or the issue of a sub-task) and " +
		"due date. Each call creates a new issue: do not retry one that succeeded. Returns the new issue's key and URL.",
	DocsURL: "https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-post",
	Scopes:  []string{"write:jira-work"},
	Hints:   providers.Hints{},
	Run:     createIssue,
}

// CreateIssueInput is the input of create_issue.
type CreateIssueInput struct {
	Project     string   `json:"project" jsonschema:"The project's key (or numeric ID)" schema:"minLength=1,example=PROJ"`
	Summary     string   `json:"summary" jsonschema:"The issue's summary (title)" schema:"minLength=1,maxLength=255,example=Login times out on slow networks"`
	IssueType   string   `json:"issue_type" jsonschema:"The issue type's name in this project" schema:"minLength=1,example=Bug"`
	Description *string  `json:"description,omitempty" jsonschema:"Plain-text description; blank lines separate paragraphs" schema:"example=Steps to reproduce: throttle to 3G and sign in."`
	AssigneeID  *string  `json:"assignee_account_id,omitempty" jsonschema:"Atlassian account ID of the assignee" schema:"minLength=1,example=5b10ac8d82e05b22cc7d4ef5"`
	Priority    *string  `json:"priority,omitempty" jsonschema:"Priority name, e.g. High" schema:"minLength=1,example=High"`
	Labels      []string `json:"labels,omitempty" jsonschema:"Labels (no spaces)"`
	Parent      *string  `json:"parent,omitempty" jsonschema:"Key of the parent: an epic, or the issue a sub-task belongs to" schema:"example=PROJ-100"`
	DueDate     *string  `json:"due_date,omitempty" jsonschema:"Due date, YYYY-MM-DD" schema:"example=2026-12-31,pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
}

// CreatedIssue is the issue Jira created.
type CreatedIssue struct {
	Key string `json:"key" jsonschema:"The new issue's key, e.g. PROJ-124"`
	ID  string `json:"id" jsonschema:"The new issue's numeric ID"`
	URL string `json:"url,omitempty" jsonschema:"The new issue's address on the Jira site"`
}

// createFields maps Jira's field names in errors to create_issue's arguments.
var createFields = map[string]string{"project": "project", "summary": "summary", "issuetype": "issue_type",
	"description": "description", "assignee": "assignee_account_id", "priority": "priority", "labels": "labels",
	"parent": "parent", "duedate": "due_date"}

func createIssue(ctx context.Context, c *providers.Call, in CreateIssueInput) (CreatedIssue, error) {
	project := strings.TrimSpace(in.Project)
	if !projectKeyPattern.MatchString(project) {
		return CreatedIssue{}, switchboard.Invalid("project", "must be a project key such as PROJ (or a numeric project ID)")
	}
	summary := strings.TrimSpace(in.Summary)
	if summary == "" {
		return CreatedIssue{}, switchboard.Invalid("summary", "is empty")
	}
	if strings.TrimSpace(in.IssueType) == "" {
		return CreatedIssue{}, switchboard.Invalid("issue_type", "is empty")
	}
	fields := map[string]any{"summary": summary, "issuetype": map[string]any{"name": strings.TrimSpace(in.IssueType)}}
	if _, err := strconv.ParseUint(project, 10, 64); err == nil {
		fields["project"] = map[string]any{"id": project}
	} else {
		fields["project"] = map[string]any{"key": strings.ToUpper(project)}
	}
	if err := setFields(fields, in.Description, in.AssigneeID, in.Priority, in.Labels, in.Parent, in.DueDate); err != nil {
		return CreatedIssue{}, err
	}
	var r struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	if err := (request{method: http.MethodPost, path: "/issue", body: map[string]any{"fields": fields}, fields: createFields}).do(ctx, c, &r); err != nil {
		return CreatedIssue{}, err
	}
	return CreatedIssue{Key: r.Key, ID: r.ID, URL: browseURL(c, r.Key)}, nil
}

var (
	datePattern  = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	labelPattern = regexp.MustCompile(`^[^\s]{1,255}$`)
)

// setFields checks the optional fields create_issue and update_issue share and sets
// them in Jira's shape.
func setFields(fields map[string]any, description, assignee, priority *string, labels []string, parent, dueDate *string) error {
	if description != nil {
		fields["description"] = adfFromText(*description)
	}
	if assignee != nil {
		a := strings.TrimSpace(*assignee)
		if a == "" || strings.ContainsAny(a, " /?#") {
			return switchboard.Invalid("assignee_account_id", "must be an Atlassian account ID such as 5b10ac8d82e05b22cc7d4ef5")
		}
		fields["assignee"] = map[string]any{"accountId": a}
	}
	if priority != nil {
		fields["priority"] = map[string]any{"name": strings.TrimSpace(*priority)}
	}
	if labels != nil {
		for _, l := range labels {
			if !labelPattern.MatchString(l) {
				return switchboard.Invalid("labels", "a label must be 1 to 255 characters without spaces")
			}
		}
		fields["labels"] = labels
	}
	if parent != nil {
		_, key, err := issuePath("parent", *parent, "")
		if err != nil {
			return err
		}
		fields["parent"] = map[string]any{"key": key}
	}
	if dueDate != nil {
		if !datePattern.MatchString(*dueDate) {
			return switchboard.Invalid("due_date", "must be a date such as 2026-12-31")
		}
		fields["duedate"] = *dueDate
	}
	return nil
}
