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

// FindUsers finds people by name or email, to get the account IDs other tools take.
// Jira API docs: https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-user-search/#api-rest-api-3-user-search-get
var FindUsers = &providers.Operation[FindUsersInput, UserList]{
	Name:  "find_users",
	Title: "Find users",
	Description: "Find Jira users whose display name or email starts with query, to get the Atlassian account ID " +
		"that create_issue and update_issue take as assignee_account_id, or that JQL takes (assignee = <account ID>). " +
		"With project, only people who may be assigned issues in that project are returned. Returns each user's " +
		"account ID, display name, email (when their privacy settings show it) and whether they are active, and " +
		"next_cursor when more may follow.",
	DocsURL: "https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-user-search/#api-rest-api-3-user-search-get",
	Scopes:  []string{"read:jira-user"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     findUsers,
}

// FindUsersInput is the input of find_users.
type FindUsersInput struct {
	Query   string  `json:"query" jsonschema:"The start of a display name or email address" schema:"minLength=1,maxLength=255,example=mia"`
	Project *string `json:"project,omitempty" jsonschema:"Only people assignable to issues in this project (key)" schema:"minLength=1,example=PROJ"`
	providers.PageInput
}

// UserList is one page of users.
type UserList struct {
	Users      []User `json:"users" jsonschema:"The users found"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent when this page was not full"`
}

// User is a Jira user.
type User struct {
	AccountID   string `json:"account_id" jsonschema:"The Atlassian account ID, e.g. 5b10ac8d82e05b22cc7d4ef5"`
	DisplayName string `json:"display_name" jsonschema:"The user's display name"`
	Email       string `json:"email,omitempty" jsonschema:"The user's email, when their privacy settings show it"`
	Active      bool   `json:"active" jsonschema:"Whether the account is active"`
	AccountType string `json:"account_type" jsonschema:"atlassian (a person), app (a bot) or customer (a service desk customer)"`
}

func findUsers(ctx context.Context, c *providers.Call, in FindUsersInput) (UserList, error) {
	query := strings.TrimSpace(in.Query)
	if query == "" {
		return UserList{}, switchboard.Invalid("query", "is empty")
	}
	n, err := pageSize(in.PageInput)
	if err != nil {
		return UserList{}, err
	}
	pos, err := in.DecodedCursor()
	if err != nil {
		return UserList{}, err
	}
	start := 0
	if pos != "" {
		if start, err = strconv.Atoi(pos); err != nil || start < 1 {
			return UserList{}, switchboard.Invalid("cursor", "is not a cursor this tool returned; pass next_cursor from the previous page, or omit it")
		}
	}
	q := url.Values{"query": {query}, "startAt": {strconv.Itoa(start)}, "maxResults": {strconv.Itoa(n)}}
	path := "/user/search"
	if in.Project != nil {
		p := strings.TrimSpace(*in.Project)
		if !projectKeyPattern.MatchString(p) {
			return UserList{}, switchboard.Invalid("project", "must be a project key such as PROJ")
		}
		path = "/user/assignable/search"
		q.Set("project", strings.ToUpper(p))
	}
	var r []userObject
	if err := (request{method: http.MethodGet, path: path, query: q}).do(ctx, c, &r); err != nil {
		return UserList{}, err
	}
	out := UserList{Users: make([]User, 0, len(r))}
	for _, u := range r {
		out.Users = append(out.Users, User{AccountID: u.AccountID, DisplayName: u.DisplayName, Email: u.EmailAddress, Active: u.Active, AccountType: u.AccountType})
	}
	if len(r) == n {
		out.NextCursor = providers.EncodeCursor(strconv.Itoa(start + n))
	}
	return out, nil
}
