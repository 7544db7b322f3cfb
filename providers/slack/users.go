package slack

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboard-hub/switchboard/providers"
)

// GetUsers lists the workspace's members.
// Slack API docs: https://api.slack.com/methods/users.list
var GetUsers = &providers.Operation[GetUsersInput, GetUsersOutput]{
	Name:  "get_users",
	Title: "Get users",
	Description: "List the people (and bots) of the Slack workspace with their user IDs (U0123ABCD), handles, real and " +
		"display names, titles and time zones; email only when the connection has users:read.email. Deactivated " +
		"accounts are included with deleted true. Use it to turn a name into the user ID other tools and <@U…> " +
		"mentions need; to find one person by email, get_user_by_email is quicker. Returns the members of this page and " +
		"next_cursor: pass it back as cursor for the next page.",
	DocsURL: "https://api.slack.com/methods/users.list",
	Scopes:  []string{"users:read", "users:read.email"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getUsers,
}

// GetUsersInput is the input of get_users.
type GetUsersInput struct {
	providers.PageInput
}

// GetUsersOutput is the output of get_users.
type GetUsersOutput struct {
	Users      []User `json:"users" jsonschema:"The members in this page"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"Pass as cursor to fetch the next page; absent on the last page"`
}

// User is one member of a Slack workspace.
type User struct {
	ID          string `json:"id" jsonschema:"User ID, e.g. U0123ABCD; mention them in text as <@U0123ABCD>"`
	Name        string `json:"name" jsonschema:"The account's handle (username), e.g. jane.doe"`
	RealName    string `json:"real_name,omitempty" jsonschema:"Full name, e.g. Jane Doe"`
	DisplayName string `json:"display_name,omitempty" jsonschema:"The name shown in Slack, when the person set one"`
	Email       string `json:"email,omitempty" jsonschema:"Email address; present only with the users:read.email scope"`
	Title       string `json:"title,omitempty" jsonschema:"Job title from the profile"`
	TZ          string `json:"tz,omitempty" jsonschema:"IANA time zone, e.g. America/Los_Angeles"`
	IsBot       bool   `json:"is_bot" jsonschema:"True for bots and apps"`
	IsAdmin     bool   `json:"is_admin" jsonschema:"True for workspace admins"`
	Deleted     bool   `json:"deleted" jsonschema:"True when the account is deactivated"`
}

// slackUser is a user object as the Web API sends it.
type slackUser struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	RealName string `json:"real_name"`
	TZ       string `json:"tz"`
	IsBot    bool   `json:"is_bot"`
	IsAdmin  bool   `json:"is_admin"`
	Deleted  bool   `json:"deleted"`
	Profile  struct {
		RealName    string `json:"real_name"`
		DisplayName string `json:"display_name"`
		Email       string `json:"email"`
		Title       string `json:"title"`
	} `json:"profile"`
}

func (u slackUser) user() User {
	realName := u.RealName
	if realName == "" {
		realName = u.Profile.RealName
	}
	return User{
		ID: u.ID, Name: u.Name, RealName: realName, DisplayName: u.Profile.DisplayName, Email: u.Profile.Email,
		Title: u.Profile.Title, TZ: u.TZ, IsBot: u.IsBot, IsAdmin: u.IsAdmin, Deleted: u.Deleted,
	}
}

type usersListResponse struct {
	envelope
	Members []slackUser `json:"members"`
}

func getUsers(ctx context.Context, c *providers.Call, in GetUsersInput) (GetUsersOutput, error) {
	q := url.Values{}
	if err := setPage(q, in.PageInput, 30); err != nil {
		return GetUsersOutput{}, err
	}
	var r usersListResponse
	if _, err := send(ctx, c, http.MethodGet, "users.list", q, &r); err != nil {
		return GetUsersOutput{}, err
	}
	out := GetUsersOutput{Users: make([]User, 0, len(r.Members)), NextCursor: providers.EncodeCursor(r.ResponseMetadata.NextCursor)}
	for _, m := range r.Members {
		out.Users = append(out.Users, m.user())
	}
	return out, nil
}

// GetUserProfile looks up one person. It uses users.info rather than users.profile.get:
// only users.info carries the handle, the time zone and the bot and admin flags besides
// the profile's names, title and email.
// Slack API docs: https://api.slack.com/methods/users.info
var GetUserProfile = &providers.Operation[GetUserProfileInput, User]{
	Name:  "get_user_profile",
	Title: "Get user profile",
	Description: "Look up one Slack user by ID (U0123ABCD or W… on Enterprise Grid, as found in a message's user field " +
		"or a <@U…> mention): handle, real and display name, title, time zone, and email when the connection has " +
		"users:read.email. Returns the user with those fields and whether they are a bot, an admin or deactivated.",
	DocsURL: "https://api.slack.com/methods/users.info",
	Scopes:  []string{"users:read", "users:read.email"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getUserProfile,
}

// GetUserProfileInput is the input of get_user_profile.
type GetUserProfileInput struct {
	User string `json:"user" jsonschema:"User ID, e.g. U0123ABCD" schema:"example=U0123ABCD,pattern=^[UW][A-Z0-9]+$"`
}

type usersInfoResponse struct {
	envelope
	User slackUser `json:"user"`
}

func getUserProfile(ctx context.Context, c *providers.Call, in GetUserProfileInput) (User, error) {
	var r usersInfoResponse
	if _, err := send(ctx, c, http.MethodGet, "users.info", url.Values{"user": {in.User}}, &r); err != nil {
		return User{}, err
	}
	return r.User.user(), nil
}

// GetUserByEmail finds a person by email address.
// Slack API docs: https://api.slack.com/methods/users.lookupByEmail
var GetUserByEmail = &providers.Operation[GetUserByEmailInput, User]{
	Name:  "get_user_by_email",
	Title: "Get user by email",
	Description: "Find the Slack user who has an email address (e.g. from a ticket, a commit or a calendar invite), to " +
		"mention them (<@U…>), message them or invite them to a channel. Faster and more precise than paging through " +
		"get_users. Needs the users:read.email scope; an address no one in the workspace has is not_found. Returns the " +
		"user: ID (U…), handle, names, title, time zone and email.",
	DocsURL: "https://api.slack.com/methods/users.lookupByEmail",
	Scopes:  []string{"users:read.email"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getUserByEmail,
}

// GetUserByEmailInput is the input of get_user_by_email.
type GetUserByEmailInput struct {
	Email string `json:"email" jsonschema:"The email address of the person's Slack account, e.g. jane@acme.example" schema:"minLength=3,maxLength=254,format=email,example=jane@acme.example,pattern=^[^@\\s]+@[^@\\s]+$"`
}

func getUserByEmail(ctx context.Context, c *providers.Call, in GetUserByEmailInput) (User, error) {
	var r usersInfoResponse
	if _, err := send(ctx, c, http.MethodGet, "users.lookupByEmail", url.Values{"email": {in.Email}}, &r); err != nil {
		return User{}, err
	}
	return r.User.user(), nil
}
