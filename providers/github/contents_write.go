package github

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// CreateOrUpdateFile writes one file in one commit.
// GitHub API docs: https://docs.github.com/rest/repos/contents#create-or-update-file-contents
var CreateOrUpdateFile = &providers.Operation[CreateOrUpdateFileInput, FileCommit]{
	Name:  "create_or_update_file",
	Title: "Create or update file",
	Description: "Write one text file to a branch as one commit: create it, or replace its whole content. To replace an " +
		"existing file, pass its current blob sha (from get_file_contents); without it GitHub refuses the update, and a " +
		"stale sha fails as a conflict (someone changed the file: read it again). To change several files in one commit " +
		"use push_files. Returns the file's new sha and the commit.",
	DocsURL: "https://docs.github.com/rest/repos/contents#create-or-update-file-contents",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{Destructive: true},
	Run:     createOrUpdateFile,
}

// CreateOrUpdateFileInput is the input of create_or_update_file.
type CreateOrUpdateFileInput struct {
	Owner   string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo    string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	Path    string  `json:"path" jsonschema:"File path from the repository root, e.g. docs/notes.md" schema:"minLength=1,maxLength=4096,example=docs/notes.md"`
	Content string  `json:"content" jsonschema:"The whole new file content as UTF-8 text, e.g. Hello world" schema:"maxLength=1048576,example=Hello world"`
	Message string  `json:"message" jsonschema:"Commit message, e.g. Add usage notes" schema:"minLength=1,maxLength=65536,example=Add usage notes"`
	Branch  *string `json:"branch,omitempty" jsonschema:"Branch to commit to; omit for the default branch, e.g. fix-typo" schema:"minLength=1,maxLength=255,example=fix-typo"`
	SHA     *string `json:"sha,omitempty" jsonschema:"Blob SHA of the file being replaced (required to update an existing file), e.g. 95b966ae1c166bd92f8ae7d1c313e738c731dfc3" schema:"minLength=40,maxLength=64,example=95b966ae1c166bd92f8ae7d1c313e738c731dfc3"`
}

// FileCommit is a file written by a commit.
type FileCommit struct {
	Path    string      `json:"path" jsonschema:"Path of the file written"`
	SHA     string      `json:"sha" jsonschema:"New blob SHA of the file; pass it as sha to update the file again"`
	HTMLURL string      `json:"html_url" jsonschema:"Web page of the file"`
	Commit  CommitBrief `json:"commit" jsonschema:"The commit that wrote it"`
}

// CommitBrief is a commit just made.
type CommitBrief struct {
	SHA     string `json:"sha" jsonschema:"Commit SHA"`
	Message string `json:"message" jsonschema:"Commit message"`
	HTMLURL string `json:"html_url" jsonschema:"Web page of the commit"`
}

// ghGitCommit is GitHub's git-commit object.
type ghGitCommit struct {
	SHA     string `json:"sha"`
	HTMLURL string `json:"html_url"`
	Message string `json:"message"`
	Tree    struct {
		SHA string `json:"sha"`
	} `json:"tree"`
}

// putFileBody is the JSON body of PUT /repos/{owner}/{repo}/contents/{path}.
type putFileBody struct {
	Message string  `json:"message"`
	Content string  `json:"content"`
	Branch  *string `json:"branch,omitempty"`
	SHA     *string `json:"sha,omitempty"`
}

func createOrUpdateFile(ctx context.Context, c *providers.Call, in CreateOrUpdateFileInput) (FileCommit, error) {
	if strings.Trim(in.Path, "/") == "" {
		return FileCommit{}, switchboard.Invalid("path", "is required: the file's path from the repository root, e.g. docs/notes.md")
	}
	p, err := contentsPath(in.Owner, in.Repo, in.Path)
	if err != nil {
		return FileCommit{}, err
	}
	if strings.TrimSpace(in.Message) == "" {
		return FileCommit{}, switchboard.Invalid("message", "is required and must not be blank")
	}
	if in.Branch != nil {
		if err := checkBranch("branch", *in.Branch); err != nil {
			return FileCommit{}, err
		}
	}
	body := putFileBody{Message: in.Message, Content: base64.StdEncoding.EncodeToString([]byte(in.Content)), Branch: in.Branch, SHA: in.SHA}
	var res struct {
		Content *struct {
			Path    string  `json:"path"`
			SHA     string  `json:"sha"`
			HTMLURL *string `json:"html_url"`
		} `json:"content"`
		Commit ghGitCommit `json:"commit"`
	}
	if _, err := (request{method: http.MethodPut, path: p, body: body}).do(ctx, c, &res); err != nil {
		return FileCommit{}, err
	}
	out := FileCommit{Commit: CommitBrief{SHA: res.Commit.SHA, Message: res.Commit.Message, HTMLURL: res.Commit.HTMLURL}}
	if res.Content != nil {
		out.Path, out.SHA, out.HTMLURL = res.Content.Path, res.Content.SHA, deref(res.Content.HTMLURL)
	}
	return out, nil
}
