// Package github is the GitHub provider: repositories, contents, issues and pull
// requests through the GitHub REST API (https://docs.github.com/rest), on github.com
// or on GitHub Enterprise Server (base URL https://HOST/api/v3).
package github

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard/providers"
)

// Spec returns the GitHub provider. Every request path is joined to the Call's base URL,
// so a deployment points it at GitHub Enterprise Server by overriding BaseURL.
func Spec() providers.Spec {
	return providers.Spec{
		Name:        "github",
		Title:       "GitHub",
		Description: "Search repositories, read files, and work with issues and pull requests on GitHub or GitHub Enterprise Server.",
		DocsURL:     "https://docs.github.com/rest",
		BaseURL:     "https://api.github.com",
		AuthKinds:   []providers.AuthKind{providers.AuthAPIKey, providers.AuthOAuth2},
		OAuth:       oauth(),
		TokenHelp: "Paste a GitHub personal access token, created at https://github.com/settings/tokens " +
			"(on GitHub Enterprise Server: https://HOST/settings/tokens). A fine-grained token: choose the repositories, " +
			"then the repository permissions Contents: Read, Issues: Read and write, Pull requests: Read and write " +
			"(Metadata: Read is added by itself). A classic token: the repo scope (public_repo is enough for public repositories only).",
		// GitHub allows 5,000 requests an hour per token (about 1.4 a second sustained).
		// The bucket only smooths bursts; the X-RateLimit-* headers GitHub sends on every
		// answer are honoured by the client kit, which stops sending once they say the
		// hour is spent.
		RateLimit: providers.RateLimit{PerSecond: 10, Burst: 50, MaxWait: 10 * time.Second},
		Headers: map[string]string{
			"Accept":               "application/vnd.github+json",
			"X-GitHub-Api-Version": "2022-11-28",
		},
		Verify: verify,
		Operations: []providers.Op{
			SearchRepositories,
			GetFileContents,
			ListIssues,
			GetIssue,
			CreateIssue,
			UpdateIssue,
			AddIssueComment,
			ListPullRequests,
			GetPullRequest,
			CreatePullRequest,
		},
	}
}

// authenticatedUser is the part of GET /user Verify reads.
type authenticatedUser struct {
	ID    int64  `json:"id"`
	Login string `json:"login"`
}

// verify checks the token with GET /user and returns the account it belongs to; the
// scopes of a classic token come from X-OAuth-Scopes (fine-grained tokens send none).
// GitHub API docs: https://docs.github.com/rest/users/users#get-the-authenticated-user
func verify(ctx context.Context, c *providers.Call) (providers.Account, error) {
	var u authenticatedUser
	h, err := request{method: http.MethodGet, path: "/user"}.do(ctx, c, &u)
	if err != nil {
		return providers.Account{}, err
	}
	return providers.Account{ID: strconv.FormatInt(u.ID, 10), Label: u.Login, Scopes: parseScopes(h.Get("X-OAuth-Scopes"))}, nil
}

// parseScopes splits X-OAuth-Scopes ("repo, read:org"); an absent or empty header is no scopes.
func parseScopes(v string) []string {
	scopes := []string{}
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			scopes = append(scopes, s)
		}
	}
	return scopes
}
