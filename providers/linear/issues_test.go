package linear_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/linear"
)

// opCase is one tool call against a fake Linear.
type opCase struct {
	name    string
	tool    string
	args    string
	replies map[string]reply
	want    any
	sent    []call
}

func (tc opCase) run(t *testing.T) {
	t.Helper()
	up := fakeLinear(t, tc.replies)
	out, err := invoke(t, tc.tool, newCall(t, up, testKey), tc.args)
	if err != nil {
		t.Fatalf("%s: %v", tc.tool, err)
	}
	if diff := cmp.Diff(tc.want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	checkSent(t, up, tc.sent...)
	for _, req := range up.Requests() {
		if got := req.Header.Get("Authorization"); got != testKey {
			t.Errorf("Authorization = %q, want the bare API key", got)
		}
	}
}

func TestIssues(t *testing.T) {
	t.Parallel()
	page := func(more bool, nodes ...string) string {
		s := `{"data": {"issues": {"nodes": [`
		for i, n := range nodes {
			if i > 0 {
				s += ","
			}
			s += n
		}
		if more {
			return s + `], "pageInfo": {"hasNextPage": true, "endCursor": "c2f1e0d9-last"}}}}`
		}
		return s + `], "pageInfo": {"hasNextPage": false, "endCursor": null}}}}`
	}
	for _, tc := range []opCase{
		{
			name: "list issues, defaults", tool: "linear_list_issues", args: `{}`,
			replies: map[string]reply{"ListIssues": {body: page(true, issueJSON, bareIssueJSON)}},
			want:    linear.IssueList{Issues: []linear.Issue{loginIssue, darkModeIssue}, NextCursor: providers.EncodeCursor("c2f1e0d9-last")},
			sent:    []call{{Operation: "ListIssues", Variables: map[string]any{"first": float64(30)}}},
		},
		{
			name: "list issues, every filter and the next page", tool: "linear_list_issues",
			args:    `{"team": "eng", "state": "In Progress", "state_type": "started", "assignee": "me", "project": "Mobile launch", "label": "Bug", "include_archived": true, "limit": 50, "cursor": "` + providers.EncodeCursor("c2f1e0d9-last") + `"}`,
			replies: map[string]reply{"ListIssues": {body: page(false, issueJSON)}},
			want:    linear.IssueList{Issues: []linear.Issue{loginIssue}},
			sent: []call{{Operation: "ListIssues", Variables: map[string]any{
				"first": float64(50), "after": "c2f1e0d9-last", "includeArchived": true,
				"filter": map[string]any{
					"team":     map[string]any{"key": map[string]any{"eqIgnoreCase": "eng"}},
					"state":    map[string]any{"name": map[string]any{"eqIgnoreCase": "In Progress"}, "type": map[string]any{"eq": "started"}},
					"assignee": map[string]any{"isMe": map[string]any{"eq": true}},
					"project":  map[string]any{"name": map[string]any{"eqIgnoreCase": "Mobile launch"}},
					"labels":   map[string]any{"some": map[string]any{"name": map[string]any{"eqIgnoreCase": "Bug"}}},
				},
			}}},
		},
		{
			name: "list issues by IDs and email", tool: "linear_list_issues",
			args:    `{"team": "9CFB482A-81E3-4154-B5B9-2C805E70A02D", "assignee": "ada@acme.com", "project": "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"}`,
			replies: map[string]reply{"ListIssues": {body: page(false)}},
			want:    linear.IssueList{Issues: []linear.Issue{}},
			sent: []call{{Operation: "ListIssues", Variables: map[string]any{
				"first": float64(30),
				"filter": map[string]any{
					"team":     map[string]any{"id": map[string]any{"eq": "9cfb482a-81e3-4154-b5b9-2c805e70a02d"}},
					"assignee": map[string]any{"email": map[string]any{"eqIgnoreCase": "ada@acme.com"}},
					"project":  map[string]any{"id": map[string]any{"eq": "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"}},
				},
			}}},
		},
		{
			name: "unassigned issues", tool: "linear_list_issues", args: `{"assignee": "none"}`,
			replies: map[string]reply{"ListIssues": {body: page(false, bareIssueJSON)}},
			want:    linear.IssueList{Issues: []linear.Issue{darkModeIssue}},
			sent:    []call{{Operation: "ListIssues", Variables: map[string]any{"first": float64(30), "filter": map[string]any{"assignee": map[string]any{"null": true}}}}},
		},
		{
			name: "search issues", tool: "linear_search_issues",
			args:    `{"query": " login timeout ", "team_id": "9cfb482a-81e3-4154-b5b9-2c805e70a02d", "include_comments": true, "limit": 10}`,
			replies: map[string]reply{"SearchIssues": {body: `{"data": {"searchIssues": {"nodes": [` + issueJSON + `], "pageInfo": {"hasNextPage": false, "endCursor": "x"}, "totalCount": 1}}}`}},
			want:    linear.IssueList{Issues: []linear.Issue{loginIssue}},
			sent: []call{{Operation: "SearchIssues", Variables: map[string]any{"term": "login timeout", "first": float64(10),
				"teamId": "9cfb482a-81e3-4154-b5b9-2c805e70a02d", "includeComments": true}}},
		},
		{
			name: "get issue with comments", tool: "linear_get_issue", args: `{"issue": "eng-123"}`,
			replies: map[string]reply{"GetIssue": {body: `{"data": {"issue": ` + issueJSON[:len(issueJSON)-2] + `,
  "comments": {"nodes": [
    {"id": "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d", "body": "Reproduced on staging.", "url": "https://linear.app/acme/issue/ENG-123#comment-a1b2c3d4", "createdAt": "2026-11-03T08:00:00.000Z", "user": {"name": "Grace Hopper"}},
    {"id": "b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e", "body": "Synced from GitHub.", "url": "https://linear.app/acme/issue/ENG-123#comment-b2c3d4e5", "createdAt": "2026-11-04T08:00:00.000Z", "user": null}
  ]}}}}`}},
			want: linear.IssueDetail{Issue: loginIssue, Comments: []linear.Comment{
				{ID: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d", Body: "Reproduced on staging.", Author: "Grace Hopper",
					URL: "https://linear.app/acme/issue/ENG-123#comment-a1b2c3d4", CreatedAt: "2026-11-03T08:00:00.000Z"},
				{ID: "b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e", Body: "Synced from GitHub.",
					URL: "https://linear.app/acme/issue/ENG-123#comment-b2c3d4e5", CreatedAt: "2026-11-04T08:00:00.000Z"},
			}},
			sent: []call{{Operation: "GetIssue", Variables: map[string]any{"id": "ENG-123"}}},
		},
		{
			name: "create issue in a team given by key", tool: "linear_create_issue",
			args: `{"team": "ENG", "title": " Login times out on slow networks ", "description": "Steps to reproduce: throttle to 3G, sign in.", "priority": 2,
				"assignee_id": "5c3b2c4e-7f1a-4f7e-9a45-2d1f0c9e8b7a", "state_id": "3f1d2a7c-5b4e-4c8d-9e0f-1a2b3c4d5e6f",
				"label_ids": ["e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b"], "project_id": "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d",
				"parent_id": "eng-100", "estimate": 3, "due_date": "2026-12-31"}`,
			replies: map[string]reply{
				"TeamByKey":   {body: `{"data": {"teams": {"nodes": [{"id": "9cfb482a-81e3-4154-b5b9-2c805e70a02d", "key": "ENG"}]}}}`},
				"CreateIssue": {body: `{"data": {"issueCreate": {"success": true, "issue": ` + issueJSON + `}}}`},
			},
			want: loginIssue,
			sent: []call{
				{Operation: "TeamByKey", Variables: map[string]any{"key": "ENG"}},
				{Operation: "CreateIssue", Variables: map[string]any{"input": map[string]any{
					"teamId": "9cfb482a-81e3-4154-b5b9-2c805e70a02d", "title": "Login times out on slow networks",
					"description": "Steps to reproduce: throttle to 3G, sign in.", "priority": float64(2),
					"assigneeId": "5c3b2c4e-7f1a-4f7e-9a45-2d1f0c9e8b7a", "stateId": "3f1d2a7c-5b4e-4c8d-9e0f-1a2b3c4d5e6f",
					"labelIds": []any{"e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b"}, "projectId": "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d",
					"parentId": "ENG-100", "estimate": float64(3), "dueDate": "2026-12-31",
				}}},
			},
		},
		{
			name: "create issue in a team given by ID: no lookup", tool: "linear_create_issue",
			args:    `{"team": "9cfb482a-81e3-4154-b5b9-2c805e70a02d", "title": "Add dark mode"}`,
			replies: map[string]reply{"CreateIssue": {body: `{"data": {"issueCreate": {"success": true, "issue": ` + bareIssueJSON + `}}}`}},
			want:    darkModeIssue,
			sent: []call{{Operation: "CreateIssue", Variables: map[string]any{"input": map[string]any{
				"teamId": "9cfb482a-81e3-4154-b5b9-2c805e70a02d", "title": "Add dark mode"}}}},
		},
		{
			name: "update issue: move and unassign", tool: "linear_update_issue",
			args:    `{"issue": "ENG-124", "state_id": "0a9b8c7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d", "unassign": true, "label_ids": []}`,
			replies: map[string]reply{"UpdateIssue": {body: `{"data": {"issueUpdate": {"success": true, "issue": ` + bareIssueJSON + `}}}`}},
			want:    darkModeIssue,
			sent: []call{{Operation: "UpdateIssue", Variables: map[string]any{"id": "ENG-124", "input": map[string]any{
				"stateId": "0a9b8c7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d", "assigneeId": nil, "labelIds": []any{}}}}},
		},
		{
			name: "add comment", tool: "linear_add_comment", args: `{"issue": "ENG-123", "body": "Reproduced on staging; looking into it."}`,
			replies: map[string]reply{"AddComment": {body: `{"data": {"commentCreate": {"success": true, "comment": {"id": "c3d4e5f6-a7b8-4c9d-0e1f-2a3b4c5d6e7f", "body": "Reproduced on staging; looking into it.", "url": "https://linear.app/acme/issue/ENG-123#comment-c3d4e5f6", "createdAt": "2026-11-22T12:00:00.000Z", "user": {"name": "Ada Lovelace"}}}}}`}},
			want: linear.Comment{ID: "c3d4e5f6-a7b8-4c9d-0e1f-2a3b4c5d6e7f", Body: "Reproduced on staging; looking into it.", Author: "Ada Lovelace",
				URL: "https://linear.app/acme/issue/ENG-123#comment-c3d4e5f6", CreatedAt: "2026-11-22T12:00:00.000Z"},
			sent: []call{{Operation: "AddComment", Variables: map[string]any{"input": map[string]any{"issueId": "ENG-123", "body": "Reproduced on staging; looking into it."}}}},
		},
		{
			name: "list teams with states in board order", tool: "linear_list_teams", args: `{"limit": 2}`,
			replies: map[string]reply{"ListTeams": {body: `{"data": {"teams": {"nodes": [{"id": "9cfb482a-81e3-4154-b5b9-2c805e70a02d", "key": "ENG", "name": "Engineering", "description": null,
				"states": {"nodes": [
					{"id": "3f1d2a7c-5b4e-4c8d-9e0f-1a2b3c4d5e6f", "name": "In Progress", "type": "started", "position": 2},
					{"id": "0a9b8c7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d", "name": "Backlog", "type": "backlog", "position": 0},
					{"id": "6b5a4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d", "name": "Done", "type": "completed", "position": 3}
				]}}], "pageInfo": {"hasNextPage": true, "endCursor": "team-cursor-1"}}}}`}},
			want: linear.TeamList{Teams: []linear.Team{{ID: "9cfb482a-81e3-4154-b5b9-2c805e70a02d", Key: "ENG", Name: "Engineering", States: []linear.WorkflowState{
				{ID: "0a9b8c7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d", Name: "Backlog", Type: "backlog"},
				{ID: "3f1d2a7c-5b4e-4c8d-9e0f-1a2b3c4d5e6f", Name: "In Progress", Type: "started"},
				{ID: "6b5a4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d", Name: "Done", Type: "completed"},
			}}}, NextCursor: providers.EncodeCursor("team-cursor-1")},
			sent: []call{{Operation: "ListTeams", Variables: map[string]any{"first": float64(2)}}},
		},
		{
			name: "list projects by name", tool: "linear_list_projects", args: `{"name": "launch"}`,
			replies: map[string]reply{"ListProjects": {body: `{"data": {"projects": {"nodes": [{"id": "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d", "name": "Mobile launch", "description": "Ship the iOS and Android apps",
				"state": "started", "progress": 0.42, "startDate": "2026-10-01", "targetDate": null, "url": "https://linear.app/acme/project/mobile-launch-4f2a", "lead": {"name": "Ada Lovelace"}}],
				"pageInfo": {"hasNextPage": false, "endCursor": null}}}}`}},
			want: linear.ProjectList{Projects: []linear.Project{{ID: "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d", Name: "Mobile launch",
				Description: "Ship the iOS and Android apps", State: "started", Progress: 0.42, Lead: "Ada Lovelace", StartDate: "2026-10-01",
				URL: "https://linear.app/acme/project/mobile-launch-4f2a"}}},
			sent: []call{{Operation: "ListProjects", Variables: map[string]any{"first": float64(30), "filter": map[string]any{"name": map[string]any{"containsIgnoreCase": "launch"}}}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}
