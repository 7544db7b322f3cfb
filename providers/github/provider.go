// Package github is the GitHub provider: repositories, contents, issues and pull
// requests through the GitHub REST API (https://docs.github.com/rest), on github.com
// or on GitHub Enterprise Server (base URL https://HOST/api/v3).
//
// Start from [Spec].
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
		Description: "Repositories, files and commits, issues, pull requests and reviews, releases, GitHub Actions runs, notifications, gists and organizations on GitHub or GitHub Enterprise Server.",
		DocsURL:     "https://docs.github.com/rest",
		BaseURL:     "https://api.github.com",
		BaseURLHelp: "for GitHub Enterprise Server it is https://HOST/api/v3",
		AuthKinds:   []providers.AuthKind{providers.AuthAPIKey, providers.AuthOAuth2},
		OAuth:       oauth(),
		// One step a line; the builder numbers them and links the URLs.
		TokenHelp: "Open https://github.com/settings/personal-access-tokens/new (fine-grained) or https://github.com/settings/tokens/new (classic); on GitHub Enterprise Server, https://HOST/settings/tokens.\n" +
			"Fine-grained: choose the repositories, then the repository permissions Contents, Issues, Pull requests and Actions: Read and write, Commit statuses and Checks: Read, and the account permission Gists: Read and write.\n" +
			"Classic: tick the scopes repo, workflow, gist, notifications, read:org and read:user (public_repo instead of repo is enough for public repositories). Notifications need a classic token.\n" +
			"Generate the token, copy it and paste it here.",
		// GitHub allows 5,000 requests an hour per token (about 1.4 a second sustained).
		// The bucket only smooths bursts; the X-RateLimit-* headers GitHub sends on every
		// answer are honoured by the client kit, which stops sending once they say the
		// hour is spent.
		RateLimit: providers.RateLimit{PerSecond: 10, Burst: 50, MaxWait: 10 * time.Second},
		Headers: map[string]string{
			"Accept":               "application/vnd.github+json",
			"X-GitHub-Api-Version": "2022-11-28",
		},
		// GitHub answers a renamed or transferred repository with a redirect to its new
		// path on the same API host, which clients are to follow with their token.
		SameOriginRedirects: true,
		Verify:              verify,
		Operations: []providers.Op{
			// The account and its organizations.
			GetMe, ListMyOrgs, GetOrg, ListOrgRepos,
			// Repositories, branches and commits.
			SearchRepositories, GetRepository, CreateRepository, ForkRepository,
			ListBranches, CreateBranch, ListCommits, GetCommit,
			// Files.
			GetFileContents, CreateOrUpdateFile, PushFiles, SearchCode,
			// Issues, comments, labels and milestones.
			ListIssues, SearchIssues, GetIssue, CreateIssue, UpdateIssue, ListIssueComments, AddIssueComment,
			ListLabels, CreateLabel, AddLabelsToIssue, ListMilestones, CreateMilestone,
			// Pull requests and reviews.
			ListPullRequests, GetPullRequest, CreatePullRequest, GetPullRequestFiles, GetPullRequestStatus,
			GetPullRequestComments, GetPullRequestReviews, CreatePullRequestReview, MergePullRequest, UpdatePullRequestBranch,
			// Releases and GitHub Actions.
			ListReleases, GetLatestRelease, CreateRelease, ListWorkflowRuns, RerunWorkflowRun, GetWorkflowRunLogsURL,
			// Notifications, gists and people.
			ListNotifications, MarkNotificationsRead, MarkNotificationThreadRead, ListGists, GetGist, CreateGist, SearchUsers,
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
