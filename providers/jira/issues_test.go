package jira_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/jira"
)

func TestOperations(t *testing.T) {
	t.Parallel()
	withDescription := strings.Replace(issueJSON, `"duedate": "2026-12-31",`, `"duedate": "2026-12-31",
    "description": {"type": "doc", "version": 1, "content": [
      {"type": "paragraph", "content": [{"type": "text", "text": "Steps to reproduce:"}]},
      {"type": "bulletList", "content": [
        {"type": "listItem", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "throttle to 3G"}]}]},
        {"type": "listItem", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "sign in, ask "}, {"type": "mention", "attrs": {"id": "5b10ac8d82e05b22cc7d4ef5", "text": "@Mia Krystof"}}]}]}
      ]},
      {"type": "paragraph", "content": [{"type": "text", "text": "See "}, {"type": "inlineCard", "attrs": {"url": "https://status.acme.com"}}, {"type": "hardBreak"}, {"type": "text", "text": "Thanks "}, {"type": "emoji", "attrs": {"shortName": ":smile:", "text": "😄"}}]}
    ]},
    "comment": {"comments": [
      {"id": "10000", "author": {"accountId": "5b10a2844c20165700ede21g", "displayName": "Emma Richards"},
       "body": {"type": "doc", "version": 1, "content": [{"type": "paragraph", "content": [{"type": "text", "text": "Reproduced on staging."}]}]},
       "created": "2026-11-03T08:00:00.000+0000", "updated": "2026-11-03T08:05:00.000+0000"}
    ], "maxResults": 1, "total": 1, "startAt": 0},`, 1)
	createdComment := jira.Comment{ID: "10001", Author: "Mia Krystof", Body: "Reproduced on staging; looking into it.",
		Created: "2026-11-22T12:00:00.000+0000", Updated: "2026-11-22T12:00:00.000+0000"}
	for _, tc := range []opCase{
		{
			name: "search with JQL, more to come", tool: "jira_search_issues",
			args:       `{"jql": "project = PROJ AND statusCategory != Done ORDER BY updated DESC"}`,
			answer:     `{"issues": [` + issueJSON + `,` + bareIssueJSON + `], "nextPageToken": "CAEaAggD", "isLast": false}`,
			wantMethod: http.MethodPost, wantPath: "/search/jql",
			wantBody: map[string]any{"jql": "project = PROJ AND statusCategory != Done ORDER BY updated DESC", "maxResults": float64(30), "fields": issueFields},
			want:     jira.IssueList{Issues: []jira.Issue{loginIssue, darkModeIssue}, NextCursor: providers.EncodeCursor("CAEaAggD")},
		},
		{
			name: "search, next page and the last", tool: "jira_search_issues",
			args:       `{"jql": "assignee = currentUser()", "limit": 2, "cursor": "` + providers.EncodeCursor("CAEaAggD") + `"}`,
			answer:     `{"issues": [` + bareIssueJSON + `], "isLast": true}`,
			wantMethod: http.MethodPost, wantPath: "/search/jql",
			wantBody: map[string]any{"jql": "assignee = currentUser()", "maxResults": float64(2), "fields": issueFields, "nextPageToken": "CAEaAggD"},
			want:     jira.IssueList{Issues: []jira.Issue{darkModeIssue}},
		},
		{
			name: "get issue with description and comments", tool: "jira_get_issue", args: `{"key": "proj-123"}`,
			answer:     withDescription,
			wantMethod: http.MethodGet, wantPath: "/issue/PROJ-123",
			wantQuery: url.Values{"fields": {"summary,status,issuetype,priority,assignee,reporter,project,labels,created,updated,duedate,parent,description,comment"}},
			want: jira.IssueDetail{Issue: loginIssue,
				Description: "Steps to reproduce:\n- throttle to 3G\n- sign in, ask @Mia Krystof\nSee https://status.acme.com\nThanks 😄",
				Comments: []jira.Comment{{ID: "10000", Author: "Emma Richards", Body: "Reproduced on staging.",
					Created: "2026-11-03T08:00:00.000+0000", Updated: "2026-11-03T08:05:00.000+0000"}},
				CommentsTotal: 1},
		},
		{
			name: "create issue with every field", tool: "jira_create_issue", status: http.StatusCreated,
			args: `{"project": "proj", "summary": " Login times out on slow networks ", "issue_type": "Bug", "description": "Steps to reproduce:\nthrottle to 3G\n\nThen sign in.",
				"assignee_account_id": "5b10ac8d82e05b22cc7d4ef5", "priority": "High", "labels": ["backend", "login"], "parent": "PROJ-100", "due_date": "2026-12-31"}`,
			answer:     `{"id": "10002", "key": "PROJ-123", "self": "https://api.atlassian.com/ex/jira/1324a887-45db-1bf4-1e99-ef0ff456d421/rest/api/3/issue/10002"}`,
			wantMethod: http.MethodPost, wantPath: "/issue",
			wantBody: map[string]any{"fields": map[string]any{
				"project": map[string]any{"key": "PROJ"}, "summary": "Login times out on slow networks", "issuetype": map[string]any{"name": "Bug"},
				"description": map[string]any{"type": "doc", "version": float64(1), "content": []any{
					map[string]any{"type": "paragraph", "content": []any{
						map[string]any{"type": "text", "text": "Steps to reproduce:"}, map[string]any{"type": "hardBreak"}, map[string]any{"type": "text", "text": "throttle to 3G"}}},
					map[string]any{"type": "paragraph", "content": []any{map[string]any{"type": "text", "text": "Then sign in."}}},
				}},
				"assignee": map[string]any{"accountId": "5b10ac8d82e05b22cc7d4ef5"}, "priority": map[string]any{"name": "High"},
				"labels": []any{"backend", "login"}, "parent": map[string]any{"key": "PROJ-100"}, "duedate": "2026-12-31",
			}},
			want: jira.CreatedIssue{Key: "PROJ-123", ID: "10002", URL: "https://acme.atlassian.net/browse/PROJ-123"},
		},
		{
			name: "create issue in a project given by ID", tool: "jira_create_issue", status: http.StatusCreated,
			args:       `{"project": "10000", "summary": "Add dark mode", "issue_type": "Task"}`,
			answer:     `{"id": "10003", "key": "PROJ-124", "self": "https://api.atlassian.com/ex/jira/1324a887-45db-1bf4-1e99-ef0ff456d421/rest/api/3/issue/10003"}`,
			wantMethod: http.MethodPost, wantPath: "/issue",
			wantBody: map[string]any{"fields": map[string]any{"project": map[string]any{"id": "10000"}, "summary": "Add dark mode", "issuetype": map[string]any{"name": "Task"}}},
			want:     jira.CreatedIssue{Key: "PROJ-124", ID: "10003", URL: "https://acme.atlassian.net/browse/PROJ-124"},
		},
		{
			name: "update issue: unassign, relabel, describe", tool: "jira_update_issue", status: http.StatusNoContent,
			args:       `{"key": "PROJ-124", "unassign": true, "labels": [], "description": "Fixed by raising the timeout.", "summary": "Add a dark theme"}`,
			wantMethod: http.MethodPut, wantPath: "/issue/PROJ-124",
			wantBody: map[string]any{"fields": map[string]any{"assignee": nil, "labels": []any{}, "description": adf("Fixed by raising the timeout."), "summary": "Add a dark theme"}},
			want:     jira.UpdatedIssue{Key: "PROJ-124", URL: "https://acme.atlassian.net/browse/PROJ-124", Changed: []string{"assignee", "description", "labels", "summary"}},
		},
		{
			name: "add comment", tool: "jira_add_comment", status: http.StatusCreated,
			args: `{"key": "PROJ-123", "body": "Reproduced on staging; looking into it."}`,
			answer: `{"self": "https://api.atlassian.com/ex/jira/1324a887-45db-1bf4-1e99-ef0ff456d421/rest/api/3/issue/10002/comment/10001", "id": "10001",
				"author": {"accountId": "5b10ac8d82e05b22cc7d4ef5", "displayName": "Mia Krystof", "active": true},
				"body": {"type": "doc", "version": 1, "content": [{"type": "paragraph", "content": [{"type": "text", "text": "Reproduced on staging; looking into it."}]}]},
				"updateAuthor": {"accountId": "5b10ac8d82e05b22cc7d4ef5", "displayName": "Mia Krystof"},
				"created": "2026-11-22T12:00:00.000+0000", "updated": "2026-11-22T12:00:00.000+0000", "jsdPublic": true}`,
			wantMethod: http.MethodPost, wantPath: "/issue/PROJ-123/comment",
			wantBody: map[string]any{"body": adf("Reproduced on staging; looking into it.")},
			want:     createdComment,
		},
		{
			name: "list transitions", tool: "jira_list_transitions", args: `{"key": "PROJ-123"}`,
			answer: `{"expand": "transitions", "transitions": [
				{"id": "21", "name": "In Progress", "to": {"name": "In Progress", "id": "3", "statusCategory": {"id": 4, "key": "indeterminate", "name": "In Progress"}}, "hasScreen": false, "isGlobal": true, "isInitial": false, "isAvailable": true, "isConditional": false},
				{"id": "31", "name": "Done", "to": {"name": "Done", "id": "10001", "statusCategory": {"id": 3, "key": "done", "name": "Done"}}, "hasScreen": false, "isGlobal": true, "isInitial": false, "isAvailable": true, "isConditional": false}
			]}`,
			wantMethod: http.MethodGet, wantPath: "/issue/PROJ-123/transitions",
			want: jira.TransitionList{Transitions: []jira.Transition{
				{ID: "21", Name: "In Progress", ToStatus: "In Progress", StatusCategory: "indeterminate"},
				{ID: "31", Name: "Done", ToStatus: "Done", StatusCategory: "done"},
			}},
		},
		{
			name: "transition with a comment", tool: "jira_transition_issue", status: http.StatusNoContent,
			args:       `{"key": "PROJ-123", "transition_id": "31", "comment": "Done in release 2.4."}`,
			wantMethod: http.MethodPost, wantPath: "/issue/PROJ-123/transitions",
			wantBody: map[string]any{"transition": map[string]any{"id": "31"},
				"update": map[string]any{"comment": []any{map[string]any{"add": map[string]any{"body": adf("Done in release 2.4.")}}}}},
			want: jira.TransitionedIssue{Key: "PROJ-123", TransitionID: "31", URL: "https://acme.atlassian.net/browse/PROJ-123"},
		},
		{
			name: "list projects, first page", tool: "jira_list_projects", args: `{"query": "pho", "limit": 2}`,
			answer: `{"self": "https://api.atlassian.com/ex/jira/1324a887-45db-1bf4-1e99-ef0ff456d421/rest/api/3/project/search?maxResults=2&startAt=0", "maxResults": 2, "startAt": 0, "total": 3, "isLast": false,
				"values": [
					{"id": "10000", "key": "PROJ", "name": "Project Phoenix", "projectTypeKey": "software", "simplified": false, "style": "classic", "lead": {"accountId": "5b10a2844c20165700ede21g", "displayName": "Emma Richards"}},
					{"id": "10001", "key": "PHX", "name": "Phoenix Support", "projectTypeKey": "service_desk", "simplified": true, "style": "next-gen"}
				]}`,
			wantMethod: http.MethodGet, wantPath: "/project/search",
			wantQuery: url.Values{"startAt": {"0"}, "maxResults": {"2"}, "orderBy": {"key"}, "expand": {"lead"}, "query": {"pho"}},
			want: jira.ProjectList{Projects: []jira.Project{
				{Key: "PROJ", ID: "10000", Name: "Project Phoenix", Type: "software", Lead: "Emma Richards"},
				{Key: "PHX", ID: "10001", Name: "Phoenix Support", Type: "service_desk"},
			}, NextCursor: providers.EncodeCursor("2")},
		},
		{
			name: "list projects, last page", tool: "jira_list_projects", args: `{"limit": 2, "cursor": "` + providers.EncodeCursor("2") + `"}`,
			answer:     `{"maxResults": 2, "startAt": 2, "total": 3, "isLast": true, "values": [{"id": "10002", "key": "WEB", "name": "Website", "projectTypeKey": "business"}]}`,
			wantMethod: http.MethodGet, wantPath: "/project/search",
			wantQuery: url.Values{"startAt": {"2"}, "maxResults": {"2"}, "orderBy": {"key"}, "expand": {"lead"}},
			want:      jira.ProjectList{Projects: []jira.Project{{Key: "WEB", ID: "10002", Name: "Website", Type: "business"}}},
		},
		{
			name: "find users, a full page", tool: "jira_find_users", args: `{"query": "mi", "limit": 2}`,
			answer: `[{"self": "https://api.atlassian.com/ex/jira/1324a887-45db-1bf4-1e99-ef0ff456d421/rest/api/3/user?accountId=5b10ac8d82e05b22cc7d4ef5", "accountId": "5b10ac8d82e05b22cc7d4ef5", "accountType": "atlassian", "emailAddress": "mia@acme.com", "displayName": "Mia Krystof", "active": true},
				{"accountId": "557058:0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "accountType": "app", "displayName": "Automation for Jira", "active": true}]`,
			wantMethod: http.MethodGet, wantPath: "/user/search",
			wantQuery: url.Values{"query": {"mi"}, "startAt": {"0"}, "maxResults": {"2"}},
			want: jira.UserList{Users: []jira.User{
				{AccountID: "5b10ac8d82e05b22cc7d4ef5", DisplayName: "Mia Krystof", Email: "mia@acme.com", Active: true, AccountType: "atlassian"},
				{AccountID: "557058:0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", DisplayName: "Automation for Jira", Active: true, AccountType: "app"},
			}, NextCursor: providers.EncodeCursor("2")},
		},
		{
			name: "find assignable users in a project, next page", tool: "jira_find_users",
			args:       `{"query": "emma", "project": "proj", "cursor": "` + providers.EncodeCursor("30") + `"}`,
			answer:     `[{"accountId": "5b10a2844c20165700ede21g", "accountType": "atlassian", "displayName": "Emma Richards", "active": true}]`,
			wantMethod: http.MethodGet, wantPath: "/user/assignable/search",
			wantQuery: url.Values{"query": {"emma"}, "project": {"PROJ"}, "startAt": {"30"}, "maxResults": {"30"}},
			want:      jira.UserList{Users: []jira.User{{AccountID: "5b10a2844c20165700ede21g", DisplayName: "Emma Richards", Active: true, AccountType: "atlassian"}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
