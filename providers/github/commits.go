package github

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListCommits lists the commits of a branch, newest first.
// GitHub API docs: https://docs.github.com/rest/commits/commits#list-commits
var ListCommits = &providers.Operation[ListCommitsInput, ListCommitsOutput]{
	Name:  "list_commits",
	Title: "List commits",
	Description: "List the commits reachable from a branch, tag or SHA, newest first: SHA, message, author and date. Use " +
		"get_commit for one commit's changed files and diff. Returns a page of them.",
	DocsURL: "https://docs.github.com/rest/commits/commits#list-commits",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listCommits,
}

// GetCommit reads one commit with its changed files.
// GitHub API docs: https://docs.github.com/rest/commits/commits#get-a-commit
var GetCommit = &providers.Operation[GetCommitInput, CommitDetail]{
	Name:  "get_commit",
	Title: "Get commit",
	Description: "Read one commit by SHA, branch or tag: message, author, parents, line statistics and the files it changed " +
		"with each file's unified diff (patch; absent for binary or very large diffs). Returns the commit; at most " +
		"the first 300 files are listed.",
	DocsURL: "https://docs.github.com/rest/commits/commits#get-a-commit",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getCommit,
}

// ListCommitsInput is the input of list_commits.
type ListCommitsInput struct {
	Owner  string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo   string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	SHA    *string `json:"sha,omitempty" jsonschema:"Branch, tag or commit SHA to list from; omit for the default branch, e.g. main" schema:"minLength=1,example=main"`
	Path   *string `json:"path,omitempty" jsonschema:"Only commits that touch this file or directory, e.g. src/main.go" schema:"minLength=1,example=src/main.go"`
	Author *string `json:"author,omitempty" jsonschema:"Only commits by this GitHub login or email address, e.g. octocat" schema:"minLength=1,example=octocat"`
	Since  *string `json:"since,omitempty" jsonschema:"Only commits at or after this time, e.g. 2024-05-01T00:00:00Z" schema:"format=date-time,example=2024-05-01T00:00:00Z"`
	Until  *string `json:"until,omitempty" jsonschema:"Only commits before this time, e.g. 2024-06-01T00:00:00Z" schema:"format=date-time,example=2024-06-01T00:00:00Z"`
	providers.PageInput
}

// ListCommitsOutput is one page of commits.
type ListCommitsOutput struct {
	Commits    []Commit `json:"commits" jsonschema:"The commits on this page, newest first"`
	NextCursor string   `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// GetCommitInput is the input of get_commit.
type GetCommitInput struct {
	Owner string `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo  string `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	Ref   string `json:"ref" jsonschema:"Commit SHA, branch or tag, e.g. 6dcb09b5b57875f334f61aebed695e2e4193db5e" schema:"minLength=1,maxLength=255,example=6dcb09b5b57875f334f61aebed695e2e4193db5e"`
}

// Commit is a commit as lists show it.
type Commit struct {
	SHA         string `json:"sha" jsonschema:"Commit SHA"`
	Message     string `json:"message" jsonschema:"Full commit message"`
	AuthorName  string `json:"author_name" jsonschema:"Author name from the commit"`
	AuthorEmail string `json:"author_email" jsonschema:"Author email from the commit"`
	Author      string `json:"author,omitempty" jsonschema:"GitHub login of the author, when GitHub could match the email to an account"`
	Date        string `json:"date" jsonschema:"When it was authored (RFC 3339)"`
	HTMLURL     string `json:"html_url" jsonschema:"Web page of the commit"`
}

// CommitDetail is a commit with its changes.
type CommitDetail struct {
	Commit
	Parents   []string     `json:"parents" jsonschema:"SHAs of the parent commits (two or more for a merge)"`
	Additions int          `json:"additions" jsonschema:"Lines added"`
	Deletions int          `json:"deletions" jsonschema:"Lines deleted"`
	Files     []FileChange `json:"files" jsonschema:"The files the commit changed"`
}

// FileChange is one file changed by a commit or pull request.
type FileChange struct {
	Filename         string `json:"filename" jsonschema:"Path from the repository root"`
	Status           string `json:"status" jsonschema:"added, removed, modified, renamed, copied, changed or unchanged"`
	PreviousFilename string `json:"previous_filename,omitempty" jsonschema:"Former path of a renamed file"`
	Additions        int    `json:"additions" jsonschema:"Lines added"`
	Deletions        int    `json:"deletions" jsonschema:"Lines deleted"`
	Changes          int    `json:"changes" jsonschema:"Lines changed in all"`
	Patch            string `json:"patch,omitempty" jsonschema:"Unified diff of the file; absent for binary files and very large diffs"`
}

// ghCommit is the part of GitHub's commit object we read.
type ghCommit struct {
	SHA     string `json:"sha"`
	HTMLURL string `json:"html_url"`
	Commit  struct {
		Message string `json:"message"`
		Author  *struct {
			Name  string `json:"name"`
			Email string `json:"email"`
			Date  string `json:"date"`
		} `json:"author"`
	} `json:"commit"`
	Author  *ghUser `json:"author"`
	Parents []struct {
		SHA string `json:"sha"`
	} `json:"parents"`
	Stats *struct {
		Additions int `json:"additions"`
		Deletions int `json:"deletions"`
	} `json:"stats"`
	Files []ghFile `json:"files"`
}

// ghFile is GitHub's diff-entry object.
type ghFile struct {
	Filename         string  `json:"filename"`
	Status           string  `json:"status"`
	PreviousFilename *string `json:"previous_filename"`
	Additions        int     `json:"additions"`
	Deletions        int     `json:"deletions"`
	Changes          int     `json:"changes"`
	Patch            *string `json:"patch"`
}

func (f ghFile) output() FileChange {
	return FileChange{Filename: f.Filename, Status: f.Status, PreviousFilename: deref(f.PreviousFilename), Additions: f.Additions,
		Deletions: f.Deletions, Changes: f.Changes, Patch: deref(f.Patch)}
}

// fileChanges converts diff entries, never nil.
func fileChanges(fs []ghFile) []FileChange {
	out := make([]FileChange, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.output())
	}
	return out
}

func (c ghCommit) output() Commit {
	out := Commit{SHA: c.SHA, Message: c.Commit.Message, Author: login(c.Author), HTMLURL: c.HTMLURL}
	if a := c.Commit.Author; a != nil {
		out.AuthorName, out.AuthorEmail, out.Date = a.Name, a.Email, a.Date
	}
	return out
}

func listCommits(ctx context.Context, c *providers.Call, in ListCommitsInput) (ListCommitsOutput, error) {
	p, err := repoPath(in.Owner, in.Repo, "commits")
	if err != nil {
		return ListCommitsOutput{}, err
	}
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListCommitsOutput{}, err
	}
	setOpt(q, "sha", in.SHA)
	setOpt(q, "path", in.Path)
	setOpt(q, "author", in.Author)
	for field, v := range map[string]*string{"since": in.Since, "until": in.Until} {
		if v == nil {
			continue
		}
		if _, err := time.Parse(time.RFC3339, *v); err != nil {
			return ListCommitsOutput{}, switchboard.Invalid(field, "must be an RFC 3339 time such as 2024-05-01T00:00:00Z")
		}
		q.Set(field, *v)
	}
	var res []ghCommit
	h, err := request{method: http.MethodGet, path: p, query: q}.do(ctx, c, &res)
	if err != nil {
		return ListCommitsOutput{}, err
	}
	out := ListCommitsOutput{Commits: make([]Commit, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, cm := range res {
		out.Commits = append(out.Commits, cm.output())
	}
	return out, nil
}

func getCommit(ctx context.Context, c *providers.Call, in GetCommitInput) (CommitDetail, error) {
	if err := checkRef("ref", in.Ref); err != nil {
		return CommitDetail{}, err
	}
	p, err := repoPath(in.Owner, in.Repo, "commits", in.Ref)
	if err != nil {
		return CommitDetail{}, err
	}
	var res ghCommit
	if _, err := (request{method: http.MethodGet, path: p}).do(ctx, c, &res); err != nil {
		return CommitDetail{}, err
	}
	out := CommitDetail{Commit: res.output(), Parents: make([]string, 0, len(res.Parents)), Files: fileChanges(res.Files)}
	for _, pa := range res.Parents {
		out.Parents = append(out.Parents, pa.SHA)
	}
	if res.Stats != nil {
		out.Additions, out.Deletions = res.Stats.Additions, res.Stats.Deletions
	}
	return out, nil
}

// checkRef refuses a commit reference that is empty or could steer the request path;
// a branch name with slashes is passed escaped as one segment, as GitHub accepts.
func checkRef(field, ref string) error {
	if ref == "" || ref == "." || ref == ".." || strings.ContainsAny(ref, "?#%\\") || strings.ContainsFunc(ref, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return switchboard.Invalid(field, "must be a commit SHA, branch or tag name, e.g. main or 6dcb09b5b57875f334f61aebed695e2e4193db5e")
	}
	return nil
}
