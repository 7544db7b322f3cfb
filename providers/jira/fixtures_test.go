package jira_test

import "github.com/switchboard-hub/switchboard/providers/jira"

// issueJSON is an issue as Jira Cloud answers it (fields as asked).
const issueJSON = `{
  "expand": "renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations",
  "id": "10002",
  "self": "https://api.atlassian.com/ex/jira/1324a887-45db-1bf4-1e99-ef0ff456d421/rest/api/3/issue/10002",
  "key": "PROJ-123",
  "fields": {
    "summary": "Login times out on slow networks",
    "status": {"self": "https://api.atlassian.com/ex/jira/1324a887-45db-1bf4-1e99-ef0ff456d421/rest/api/3/status/3", "name": "In Progress", "id": "3",
      "statusCategory": {"id": 4, "key": "indeterminate", "colorName": "yellow", "name": "In Progress"}},
    "issuetype": {"id": "10004", "name": "Bug", "subtask": false},
    "priority": {"id": "2", "name": "High"},
    "assignee": {"accountId": "5b10ac8d82e05b22cc7d4ef5", "displayName": "Mia Krystof", "active": true, "accountType": "atlassian"},
    "reporter": {"accountId": "5b10a2844c20165700ede21g", "displayName": "Emma Richards", "active": true, "accountType": "atlassian"},
    "project": {"id": "10000", "key": "PROJ", "name": "Project Phoenix", "projectTypeKey": "software"},
    "labels": ["backend", "login"],
    "created": "2026-11-02T09:15:00.000+0000",
    "updated": "2026-11-20T16:40:12.345+0000",
    "duedate": "2026-12-31",
    "parent": {"id": "10000", "key": "PROJ-100", "fields": {"summary": "Auth epic"}}
  }
}`

// bareIssueJSON is a new task with no optional fields set.
const bareIssueJSON = `{
  "id": "10003",
  "key": "PROJ-124",
  "fields": {
    "summary": "Add dark mode",
    "status": {"name": "To Do", "statusCategory": {"key": "new", "name": "To Do"}},
    "issuetype": {"name": "Task"},
    "priority": null,
    "assignee": null,
    "reporter": {"accountId": "5b10a2844c20165700ede21g", "displayName": "Emma Richards"},
    "project": {"key": "PROJ"},
    "labels": [],
    "created": "2026-11-21T10:00:00.000+0000",
    "updated": "2026-11-21T10:00:00.000+0000",
    "duedate": null
  }
}`

var (
	loginIssue = jira.Issue{
		Key: "PROJ-123", ID: "10002", Summary: "Login times out on slow networks", Status: "In Progress", StatusCategory: "indeterminate",
		IssueType: "Bug", Priority: "High", Assignee: "Mia Krystof", AssigneeAccountID: "5b10ac8d82e05b22cc7d4ef5", Reporter: "Emma Richards",
		ProjectKey: "PROJ", Parent: "PROJ-100", Labels: []string{"backend", "login"}, DueDate: "2026-12-31",
		Created: "2026-11-02T09:15:00.000+0000", Updated: "2026-11-20T16:40:12.345+0000", URL: "https://acme.atlassian.net/browse/PROJ-123",
	}
	darkModeIssue = jira.Issue{
		Key: "PROJ-124", ID: "10003", Summary: "Add dark mode", Status: "To Do", StatusCategory: "new", IssueType: "Task",
		Reporter: "Emma Richards", ProjectKey: "PROJ", Labels: []string{}, Created: "2026-11-21T10:00:00.000+0000",
		Updated: "2026-11-21T10:00:00.000+0000", URL: "https://acme.atlassian.net/browse/PROJ-124",
	}
)
