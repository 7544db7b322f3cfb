package linear_test

import "github.com/switchboard-hub/switchboard/providers/linear"

// issueJSON is an issue as Linear answers it for the IssueFields fragment.
const issueJSON = `{
  "id": "2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9",
  "identifier": "ENG-123",
  "title": "Login times out on slow networks",
  "description": "Steps to reproduce: throttle to 3G, sign in.",
  "priority": 2,
  "priorityLabel": "High",
  "estimate": 3,
  "dueDate": "2026-12-31",
  "url": "https://linear.app/acme/issue/ENG-123/login-times-out-on-slow-networks",
  "createdAt": "2026-11-02T09:15:00.000Z",
  "updatedAt": "2026-11-20T16:40:12.345Z",
  "state": {"id": "3f1d2a7c-5b4e-4c8d-9e0f-1a2b3c4d5e6f", "name": "In Progress", "type": "started"},
  "team": {"id": "9cfb482a-81e3-4154-b5b9-2c805e70a02d", "key": "ENG", "name": "Engineering"},
  "assignee": {"id": "5c3b2c4e-7f1a-4f7e-9a45-2d1f0c9e8b7a", "name": "Ada Lovelace", "email": "ada@acme.com"},
  "project": {"id": "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d", "name": "Mobile launch"},
  "labels": {"nodes": [{"id": "e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b", "name": "Bug"}]}
}`

// bareIssueJSON is a fresh, unassigned issue without optional fields.
const bareIssueJSON = `{
  "id": "8d1e2f3a-4b5c-4d6e-9f0a-1b2c3d4e5f6a",
  "identifier": "ENG-124",
  "title": "Add dark mode",
  "description": null,
  "priority": 0,
  "priorityLabel": "No priority",
  "estimate": null,
  "dueDate": null,
  "url": "https://linear.app/acme/issue/ENG-124/add-dark-mode",
  "createdAt": "2026-11-21T10:00:00.000Z",
  "updatedAt": "2026-11-21T10:00:00.000Z",
  "state": {"id": "0a9b8c7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d", "name": "Backlog", "type": "backlog"},
  "team": {"id": "9cfb482a-81e3-4154-b5b9-2c805e70a02d", "key": "ENG", "name": "Engineering"},
  "assignee": null,
  "project": null,
  "labels": {"nodes": []}
}`

var (
	loginIssue = linear.Issue{
		ID: "2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9", Identifier: "ENG-123", Title: "Login times out on slow networks",
		Description: "Steps to reproduce: throttle to 3G, sign in.", Priority: 2, PriorityLabel: "High", Estimate: ptr(3.0),
		DueDate: "2026-12-31", State: "In Progress", StateType: "started", TeamKey: "ENG", Assignee: "Ada Lovelace",
		AssigneeEmail: "ada@acme.com", Project: "Mobile launch", Labels: []string{"Bug"},
		URL:       "https://linear.app/acme/issue/ENG-123/login-times-out-on-slow-networks",
		CreatedAt: "2026-11-02T09:15:00.000Z", UpdatedAt: "2026-11-20T16:40:12.345Z",
	}
	darkModeIssue = linear.Issue{
		ID: "8d1e2f3a-4b5c-4d6e-9f0a-1b2c3d4e5f6a", Identifier: "ENG-124", Title: "Add dark mode", PriorityLabel: "No priority",
		State: "Backlog", StateType: "backlog", TeamKey: "ENG", Labels: []string{},
		URL: "https://linear.app/acme/issue/ENG-124/add-dark-mode", CreatedAt: "2026-11-21T10:00:00.000Z", UpdatedAt: "2026-11-21T10:00:00.000Z",
	}
)
