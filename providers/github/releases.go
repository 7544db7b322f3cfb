package github

import (
	"context"
	"net/http"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListReleases lists a repository's releases, newest first.
// GitHub API docs: https://docs.github.com/rest/releases/releases#list-releases
var ListReleases = &providers.Operation[RepoPageInput, ListReleasesOutput]{
	Name:  "list_releases",
	Title: "List releases",
	Description: "List the releases of a repository, newest first, drafts included when the token can push: tag, name, " +
		"notes, draft and prerelease flags and downloadable assets. Use get_latest_release for just the current " +
		"version. Returns a page of them.",
	DocsURL: "https://docs.github.com/rest/releases/releases#list-releases",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listReleases,
}

// GetLatestRelease reads the latest published release.
// GitHub API docs: https://docs.github.com/rest/releases/releases#get-the-latest-release
var GetLatestRelease = &providers.Operation[RepoInput, Release]{
	Name:  "get_latest_release",
	Title: "Get latest release",
	Description: "Read the latest published full release of a repository (drafts and prereleases are skipped), e.g. to " +
		"learn the current version and its notes. A repository without releases answers not_found. Returns the release " +
		"with its tag, notes and assets.",
	DocsURL: "https://docs.github.com/rest/releases/releases#get-the-latest-release",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getLatestRelease,
}

// CreateRelease publishes (or drafts) a release.
// GitHub API docs: https://docs.github.com/rest/releases/releases#create-a-release
var CreateRelease = &providers.Operation[CreateReleaseInput, Release]{
	Name:  "create_release",
	Title: "Create release",
	Description: "Create a release for a tag; the tag is created from target_commitish when it does not exist yet. " +
		"Publishing notifies the repository's watchers. A tag that already has a release answers invalid. Returns " +
		"the release with its html_url.",
	DocsURL: "https://docs.github.com/rest/releases/releases#create-a-release",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{},
	Run:     createRelease,
}

// RepoPageInput names a repository and a page of one of its lists.
type RepoPageInput struct {
	Owner string `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo  string `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	providers.PageInput
}

// ListReleasesOutput is one page of releases.
type ListReleasesOutput struct {
	Releases   []Release `json:"releases" jsonschema:"The releases on this page, newest first"`
	NextCursor string    `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// Release is a release.
type Release struct {
	ID              int64   `json:"id" jsonschema:"Release ID"`
	TagName         string  `json:"tag_name" jsonschema:"Git tag, e.g. v1.0.0"`
	Name            string  `json:"name" jsonschema:"Release title; empty when none"`
	Body            string  `json:"body" jsonschema:"Release notes in GitHub Markdown; empty when none"`
	Draft           bool    `json:"draft" jsonschema:"True for an unpublished draft"`
	Prerelease      bool    `json:"prerelease" jsonschema:"True when marked as a prerelease"`
	TargetCommitish string  `json:"target_commitish" jsonschema:"Branch or SHA the tag was made from"`
	Author          string  `json:"author" jsonschema:"Login of the author"`
	HTMLURL         string  `json:"html_url" jsonschema:"Web page of the release"`
	CreatedAt       string  `json:"created_at" jsonschema:"When it was created (RFC 3339)"`
	PublishedAt     string  `json:"published_at,omitempty" jsonschema:"When it was published (RFC 3339); absent for drafts"`
	Assets          []Asset `json:"assets" jsonschema:"Files attached to the release"`
}

// Asset is a file attached to a release.
type Asset struct {
	Name        string `json:"name" jsonschema:"File name"`
	Size        int64  `json:"size" jsonschema:"Size in bytes"`
	DownloadURL string `json:"download_url" jsonschema:"Where to download it"`
}

// CreateReleaseInput is the input of create_release.
type CreateReleaseInput struct {
	Owner                string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo                 string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	TagName              string  `json:"tag_name" jsonschema:"Tag of the release, existing or to create, e.g. v1.2.0" schema:"minLength=1,maxLength=255,example=v1.2.0"`
	TargetCommitish      *string `json:"target_commitish,omitempty" jsonschema:"Branch or commit SHA to tag when the tag does not exist; omit for the default branch, e.g. main" schema:"minLength=1,example=main"`
	Name                 *string `json:"name,omitempty" jsonschema:"Release title, e.g. Version 1.2.0" schema:"maxLength=256,example=Version 1.2.0"`
	Body                 *string `json:"body,omitempty" jsonschema:"Release notes in GitHub Markdown, e.g. Fixes the login bug" schema:"maxLength=125000,example=Fixes the login bug"`
	Draft                *bool   `json:"draft,omitempty" jsonschema:"Create an unpublished draft" schema:"default=false"`
	Prerelease           *bool   `json:"prerelease,omitempty" jsonschema:"Mark it as a prerelease" schema:"default=false"`
	GenerateReleaseNotes *bool   `json:"generate_release_notes,omitempty" jsonschema:"Let GitHub write the name and notes from merged pull requests (body is put first)" schema:"default=false"`
}

// ghRelease is the part of GitHub's release object we read.
type ghRelease struct {
	ID              int64   `json:"id"`
	TagName         string  `json:"tag_name"`
	Name            *string `json:"name"`
	Body            *string `json:"body"`
	Draft           bool    `json:"draft"`
	Prerelease      bool    `json:"prerelease"`
	TargetCommitish string  `json:"target_commitish"`
	Author          *ghUser `json:"author"`
	HTMLURL         string  `json:"html_url"`
	CreatedAt       string  `json:"created_at"`
	PublishedAt     *string `json:"published_at"`
	Assets          []struct {
		Name               string `json:"name"`
		Size               int64  `json:"size"`
		BrowserDownloadURL string `json:"browser_download_url"`
	} `json:"assets"`
}

func (r ghRelease) output() Release {
	out := Release{ID: r.ID, TagName: r.TagName, Name: deref(r.Name), Body: deref(r.Body), Draft: r.Draft, Prerelease: r.Prerelease,
		TargetCommitish: r.TargetCommitish, Author: login(r.Author), HTMLURL: r.HTMLURL, CreatedAt: r.CreatedAt,
		PublishedAt: deref(r.PublishedAt), Assets: make([]Asset, 0, len(r.Assets))}
	for _, a := range r.Assets {
		out.Assets = append(out.Assets, Asset{Name: a.Name, Size: a.Size, DownloadURL: a.BrowserDownloadURL})
	}
	return out
}

func listReleases(ctx context.Context, c *providers.Call, in RepoPageInput) (ListReleasesOutput, error) {
	p, err := repoPath(in.Owner, in.Repo, "releases")
	if err != nil {
		return ListReleasesOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListReleasesOutput{}, err
	}
	var res []ghRelease
	h, err := request{method: http.MethodGet, path: p, query: q}.do(ctx, c, &res)
	if err != nil {
		return ListReleasesOutput{}, err
	}
	out := ListReleasesOutput{Releases: make([]Release, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, r := range res {
		out.Releases = append(out.Releases, r.output())
	}
	return out, nil
}

func getLatestRelease(ctx context.Context, c *providers.Call, in RepoInput) (Release, error) {
	p, err := repoPath(in.Owner, in.Repo, "releases", "latest")
	if err != nil {
		return Release{}, err
	}
	var res ghRelease
	if _, err := (request{method: http.MethodGet, path: p}).do(ctx, c, &res); err != nil {
		return Release{}, err
	}
	return res.output(), nil
}

// createReleaseBody is the JSON body of POST /repos/{owner}/{repo}/releases.
type createReleaseBody struct {
	TagName              string  `json:"tag_name"`
	TargetCommitish      *string `json:"target_commitish,omitempty"`
	Name                 *string `json:"name,omitempty"`
	Body                 *string `json:"body,omitempty"`
	Draft                *bool   `json:"draft,omitempty"`
	Prerelease           *bool   `json:"prerelease,omitempty"`
	GenerateReleaseNotes *bool   `json:"generate_release_notes,omitempty"`
}

func createRelease(ctx context.Context, c *providers.Call, in CreateReleaseInput) (Release, error) {
	p, err := repoPath(in.Owner, in.Repo, "releases")
	if err != nil {
		return Release{}, err
	}
	if strings.TrimSpace(in.TagName) == "" || strings.ContainsFunc(in.TagName, func(r rune) bool { return r <= ' ' }) {
		return Release{}, switchboard.Invalid("tag_name", "is required and may not hold spaces, e.g. v1.2.0")
	}
	body := createReleaseBody{TagName: in.TagName, TargetCommitish: in.TargetCommitish, Name: in.Name, Body: in.Body, Draft: in.Draft,
		Prerelease: in.Prerelease, GenerateReleaseNotes: in.GenerateReleaseNotes}
	var res ghRelease
	if _, err := (request{method: http.MethodPost, path: p, body: body}).do(ctx, c, &res); err != nil {
		return Release{}, err
	}
	return res.output(), nil
}
