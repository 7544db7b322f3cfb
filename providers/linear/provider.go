// Package linear is the Linear provider: issues, comments, teams and projects through
// Linear's GraphQL API (https://linear.app/developers/graphql), with a personal API key
// or an OAuth token.
//
// Start from [Spec].
package linear

import (
	"context"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// Spec returns the Linear provider. It builds a fresh value on every call.
func Spec() providers.Spec {
	return providers.Spec{
		Name:        "linear",
		Title:       "Linear",
		Description: "Find, create and update Linear issues, comment on them, and look up teams, workflow states and projects.",
		DocsURL:     "https://linear.app/developers/graphql",
		BaseURL:     "https://api.linear.app/graphql",
		AuthKinds:   []providers.AuthKind{providers.AuthAPIKey, providers.AuthOAuth2},
		OAuth: &providers.OAuth2{
			AuthURL:        "https://linear.app/oauth/authorize",
			TokenURL:       "https://api.linear.app/oauth/token",
			Scopes:         []string{"read", "write"},
			ScopeSeparator: ",",
			PKCE:           true,
		},
		// One step a line; the builder numbers them and links the URLs.
		TokenHelp: "In Linear open Settings, Security & access, Personal API keys (https://linear.app/settings/account/security).\n" +
			"Create a key with Read and Write access (or Full access); it acts as you.\n" +
			"Copy the key (lin_api_…) and paste it here.",
		AuthHeader: authHeader,
		// Linear allows 5,000 requests an hour per API key (fewer per OAuth app and
		// user), and a complexity budget; its RATELIMITED answers say when to retry.
		RateLimit: providers.RateLimit{PerSecond: 1, Burst: 20, MaxWait: 10 * time.Second},
		Headers:   map[string]string{"Accept": "application/json"},
		Verify:    verify,
		Operations: []providers.Op{
			ListIssues,
			SearchIssues,
			GetIssue,
			CreateIssue,
			UpdateIssue,
			AddComment,
			ListTeams,
			ListProjects,
		},
	}
}

// authHeader sends a personal API key bare, as Linear requires ("Authorization:
// lin_api_…"; with Bearer it is refused), and an OAuth access token as Bearer.
// Linear API docs: https://linear.app/developers/graphql#authentication
func authHeader(token string) (name, value string) {
	if strings.HasPrefix(token, "lin_api_") {
		return "Authorization", token
	}
	return "Authorization", "Bearer " + token
}

const viewerQuery = `query Viewer {
  viewer { id name email }
  organization { id name }
}`

// verify asks whom the credential belongs to and names the connection after the
// workspace and the user.
func verify(ctx context.Context, c *providers.Call) (providers.Account, error) {
	var data struct {
		Viewer struct {
			ID    string `json:"id"`
			Name  string `json:"name"`
			Email string `json:"email"`
		} `json:"viewer"`
		Organization struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"organization"`
	}
	if err := query(ctx, c, "Viewer", viewerQuery, nil, &data); err != nil {
		return providers.Account{}, err
	}
	if data.Viewer.ID == "" {
		return providers.Account{}, &switchboard.Error{Code: switchboard.CodeUpstream, Message: "Linear did not say whose credential this is"}
	}
	label := data.Organization.Name
	if who := data.Viewer.Email; who != "" {
		if label != "" {
			label += " (" + who + ")"
		} else {
			label = who
		}
	}
	return providers.Account{ID: data.Organization.ID + "/" + data.Viewer.ID, Label: label}, nil
}
