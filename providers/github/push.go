package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// PushFiles commits several files to a branch as one commit through the Git data API.
// GitHub API docs: https://docs.github.com/rest/git/trees#create-a-tree
var PushFiles = &providers.Operation[PushFilesInput, PushFilesOutput]{
	Name:  "push_files",
	Title: "Push files",
	Description: "Write several text files to an existing branch as ONE commit (create them or replace their whole content; " +
		"other files stay as they are). Use it instead of repeated create_or_update_file calls when a change spans " +
		"files; create the branch first with create_branch if needed. The branch moves forward only: if someone pushed " +
		"to it meanwhile, it fails and nothing changes, so call again. An empty repository (no commit yet) answers conflict: " +
		"create it with auto_init. At most 100 files and 8 MiB in all. Returns the new commit's SHA and html_url.",
	DocsURL: "https://docs.github.com/rest/git/trees#create-a-tree",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{Destructive: true},
	Run:     pushFiles,
}

// PushFilesInput is the input of push_files.
type PushFilesInput struct {
	Owner   string     `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo    string     `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	Branch  string     `json:"branch" jsonschema:"Existing branch to commit to, e.g. fix-typo" schema:"minLength=1,maxLength=255,example=fix-typo"`
	Message string     `json:"message" jsonschema:"Commit message, e.g. Update the docs" schema:"minLength=1,maxLength=65536,example=Update the docs"`
	Files   []PushFile `json:"files" jsonschema:"The files to write, each with its path and whole new content" schema:"minItems=1,maxItems=100"`
}

// PushFile is one file of push_files.
type PushFile struct {
	Path    string `json:"path" jsonschema:"File path from the repository root, e.g. docs/notes.md" schema:"minLength=1,maxLength=4096,example=docs/notes.md"`
	Content string `json:"content" jsonschema:"The whole file content as UTF-8 text, e.g. Hello world" schema:"maxLength=1048576,example=Hello world"`
}

// PushFilesOutput is the commit push_files made.
type PushFilesOutput struct {
	Ref     string   `json:"ref" jsonschema:"The branch moved, e.g. refs/heads/fix-typo"`
	SHA     string   `json:"sha" jsonschema:"SHA of the new commit"`
	Message string   `json:"message" jsonschema:"Commit message"`
	HTMLURL string   `json:"html_url" jsonschema:"Web page of the commit"`
	Parent  string   `json:"parent" jsonschema:"SHA of the commit the branch pointed at before"`
	Files   []string `json:"files" jsonschema:"Paths written"`
}

// treeEntry is one entry of POST /repos/{owner}/{repo}/git/trees.
type treeEntry struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
	Type string `json:"type"`
	SHA  string `json:"sha"`
}

func pushFiles(ctx context.Context, c *providers.Call, in PushFilesInput) (PushFilesOutput, error) {
	if err := checkBranch("branch", in.Branch); err != nil {
		return PushFilesOutput{}, err
	}
	if strings.TrimSpace(in.Message) == "" {
		return PushFilesOutput{}, switchboard.Invalid("message", "is required and must not be blank")
	}
	paths, err := pushPaths(in.Files)
	if err != nil {
		return PushFilesOutput{}, err
	}
	git := func(rest ...string) (string, error) {
		return repoPath(in.Owner, in.Repo, append([]string{"git"}, rest...)...)
	}
	commitsPath, err := git("commits")
	if err != nil {
		return PushFilesOutput{}, err
	}
	// 1. The branch's head, 2. its tree.
	head, err := branchHead(ctx, c, in.Owner, in.Repo, in.Branch)
	if err != nil {
		return PushFilesOutput{}, fmt.Errorf("read branch %s: %w", in.Branch, err)
	}
	headPath, err := git("commits", head)
	if err != nil {
		return PushFilesOutput{}, err
	}
	var base ghGitCommit
	if _, err := (request{method: http.MethodGet, path: headPath}).do(ctx, c, &base); err != nil {
		return PushFilesOutput{}, fmt.Errorf("read commit %s: %w", head, err)
	}
	// 3. One blob per file.
	blobsPath, _ := git("blobs")
	tree := make([]treeEntry, 0, len(in.Files))
	for i, f := range in.Files {
		var blob struct {
			SHA string `json:"sha"`
		}
		body := map[string]string{"content": f.Content, "encoding": "utf-8"}
		if _, err := (request{method: http.MethodPost, path: blobsPath, body: body}).do(ctx, c, &blob); err != nil {
			return PushFilesOutput{}, fmt.Errorf("store %s: %w", paths[i], err)
		}
		tree = append(tree, treeEntry{Path: paths[i], Mode: "100644", Type: "blob", SHA: blob.SHA})
	}
	// 4. A tree on top of the head's, 5. a commit of it, 6. the branch moved to it.
	treesPath, _ := git("trees")
	var newTree struct {
		SHA string `json:"sha"`
	}
	treeBody := struct {
		BaseTree string      `json:"base_tree"`
		Tree     []treeEntry `json:"tree"`
	}{base.Tree.SHA, tree}
	if _, err := (request{method: http.MethodPost, path: treesPath, body: treeBody}).do(ctx, c, &newTree); err != nil {
		return PushFilesOutput{}, fmt.Errorf("create tree: %w", err)
	}
	var commit ghGitCommit
	commitBody := struct {
		Message string   `json:"message"`
		Tree    string   `json:"tree"`
		Parents []string `json:"parents"`
	}{in.Message, newTree.SHA, []string{head}}
	if _, err := (request{method: http.MethodPost, path: commitsPath, body: commitBody}).do(ctx, c, &commit); err != nil {
		return PushFilesOutput{}, fmt.Errorf("create commit: %w", err)
	}
	refPath, err := git(append([]string{"refs", "heads"}, strings.Split(in.Branch, "/")...)...)
	if err != nil {
		return PushFilesOutput{}, err
	}
	var ref ghRef
	refBody := map[string]any{"sha": commit.SHA, "force": false}
	if _, err := (request{method: http.MethodPatch, path: refPath, body: refBody}).do(ctx, c, &ref); err != nil {
		return PushFilesOutput{}, fmt.Errorf("move branch %s to commit %s (the commit exists but the branch did not move; if the branch changed meanwhile, call again): %w", in.Branch, commit.SHA, err)
	}
	return PushFilesOutput{Ref: ref.Ref, SHA: commit.SHA, Message: commit.Message, HTMLURL: commit.HTMLURL, Parent: head, Files: paths}, nil
}

// maxPushBytes bounds the text one push_files call may write in all.
const maxPushBytes = 8 << 20

// pushPaths checks the files' paths and returns them cleaned of surrounding slashes;
// a path may not hold empty, '.' or '..' segments, nor come twice.
func pushPaths(files []PushFile) ([]string, error) {
	if len(files) == 0 {
		return nil, switchboard.Invalid("files", "give at least one file")
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(files))
	total := 0
	for i, f := range files {
		if total += len(f.Content); total > maxPushBytes {
			return nil, switchboard.Invalid("files", fmt.Sprintf("hold more than %d bytes in all; push them in several calls", maxPushBytes))
		}
		p := strings.Trim(f.Path, "/")
		field := fmt.Sprintf("files[%d].path", i)
		if p == "" {
			return nil, switchboard.Invalid(field, "is required: a file path from the repository root, e.g. docs/notes.md")
		}
		for s := range strings.SplitSeq(p, "/") {
			if s == "" || s == "." || s == ".." {
				return nil, switchboard.Invalid(field, "must be a path from the repository root without empty, '.' or '..' segments, e.g. src/main.go")
			}
		}
		if seen[p] {
			return nil, switchboard.Invalid(field, "names "+p+" a second time; give each file once")
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}
