// Package jira is the Jira Cloud provider: issues, comments, transitions and projects
// through the Jira Cloud REST API v3, reached with an Atlassian OAuth 2.0 (3LO) token
// through the Atlassian API gateway (https://api.atlassian.com/ex/jira/{cloud_id}).
//
// Start from [Spec].
package jira

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// Spec returns the Jira Cloud provider. It builds a fresh value on every call.
func Spec() providers.Spec {
	return providers.Spec{
		Name:        "jira",
		Title:       "Jira",
		Description: "Search Jira Cloud issues with JQL, read, create, update, comment on and transition them, and look up projects and people.",
		DocsURL:     "https://developer.atlassian.com/cloud/jira/platform/rest/v3/intro/",
		BaseURL:     "https://api.atlassian.com",
		AuthKinds:   []providers.AuthKind{providers.AuthOAuth2},
		OAuth: &providers.OAuth2{
			AuthURL:    "https://auth.atlassian.com/authorize",
			TokenURL:   "https://auth.atlassian.com/oauth/token",
			Scopes:     []string{"read:jira-work", "write:jira-work", "read:jira-user", "offline_access"},
			AuthParams: map[string]string{"audience": "api.atlassian.com", "prompt": "consent"},
		},
		// One step a line; the builder numbers them and links the URLs.
		TokenHelp: "Jira connects through Atlassian OAuth 2.0 only: choose Continue with OAuth and approve access to your site; an Atlassian API token cannot be pasted here.\n" +
			"If you can reach several Atlassian sites, the first one is used and named in the connection's label.",
		// Jira Cloud limits by cost per user and site and answers 429 with Retry-After;
		// the bucket only smooths bursts.
		RateLimit: providers.RateLimit{PerSecond: 5, Burst: 20, MaxWait: 10 * time.Second},
		Headers:   map[string]string{"Accept": "application/json"},
		Verify:    verify,
		Operations: []providers.Op{
			SearchIssues,
			GetIssue,
			CreateIssue,
			UpdateIssue,
			AddComment,
			ListTransitions,
			TransitionIssue,
			ListProjects,
			FindUsers,
		},
	}
}

// accessibleResource is one Atlassian site the token may reach.
// Atlassian docs: https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/#3-1-get-the-cloudid-for-your-site
type accessibleResource struct {
	ID     string   `json:"id"`
	URL    string   `json:"url"`
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
}

// verify finds the sites the token may reach, takes the first Jira site, asks Jira who
// the user is there, and records the site's cloud id and URL on the connection.
func verify(ctx context.Context, c *providers.Call) (providers.Account, error) {
	var sites []accessibleResource
	if err := send(ctx, c, http.MethodGet, "/oauth/token/accessible-resources", nil, nil, nil, &sites); err != nil {
		return providers.Account{}, err
	}
	var jiraSites []accessibleResource
	for _, s := range sites {
		for _, sc := range s.Scopes {
			if strings.Contains(sc, "jira") {
				jiraSites = append(jiraSites, s)
				break
			}
		}
	}
	if len(jiraSites) == 0 {
		return providers.Account{}, &switchboard.Error{Code: switchboard.CodeForbidden,
			Message: "this Atlassian account gave the connection no Jira site; reconnect Jira and choose a Jira site on the consent screen"}
	}
	site := jiraSites[0]
	if !cloudIDPattern.MatchString(site.ID) {
		return providers.Account{}, &switchboard.Error{Code: switchboard.CodeUpstream, Message: "Atlassian answered a site without a valid cloud id"}
	}
	meta := map[string]string{metaCloudID: site.ID, metaSiteURL: site.URL}
	onSite := *c // the caller's Call stays as it was
	onSite.Meta = meta
	var me userObject
	if err := (request{method: http.MethodGet, path: "/myself"}).do(ctx, &onSite, &me); err != nil {
		return providers.Account{}, err
	}
	if me.AccountID == "" {
		return providers.Account{}, &switchboard.Error{Code: switchboard.CodeUpstream, Message: "Jira did not say whose token this is"}
	}
	label := site.Name
	if host := strings.TrimPrefix(site.URL, "https://"); host != "" && host != site.Name {
		label += " (" + host + ")"
	}
	if me.DisplayName != "" {
		label += " as " + me.DisplayName
	}
	if len(jiraSites) > 1 {
		label += fmt.Sprintf("; first of %d Jira sites", len(jiraSites))
	}
	return providers.Account{
		ID:     site.ID + "/" + me.AccountID,
		Label:  label,
		Scopes: site.Scopes,
		Meta:   meta,
	}, nil
}
