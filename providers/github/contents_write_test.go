package github_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers/github"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

func contentsWriteCases() []opCase {
	fileCommit := github.FileCommit{
		Path: "notes/hello.txt", SHA: "95b966ae1c166bd92f8ae7d1c313e738c731dfc3", HTMLURL: "https://github.com/octocat/Hello-World/blob/master/notes/hello.txt",
		Commit: github.CommitBrief{SHA: "7638417db6d59f3c431d3e1f261cc637155684cd", Message: "my commit message",
			HTMLURL: "https://github.com/octocat/Hello-World/git/commit/7638417db6d59f3c431d3e1f261cc637155684cd"},
	}
	blob := "3a0f86fb8db8eea7ccbb9a95f325ddbedfb25e15"
	return []opCase{
		{
			name: "create a file", tool: "github_create_or_update_file", fixture: "file_commit.json", status: http.StatusCreated,
			args:       `{"owner": "octocat", "repo": "Hello-World", "path": "notes/hello.txt", "content": "Hello wörld\n", "message": "my commit message"}`,
			wantMethod: http.MethodPut, wantPath: "/repos/octocat/Hello-World/contents/notes/hello.txt", wantOpID: "repos/create-or-update-file-contents",
			wantBody: map[string]any{"message": "my commit message", "content": "SGVsbG8gd8O2cmxkCg=="},
			want:     fileCommit,
		},
		{
			name: "update a file on a branch", tool: "github_create_or_update_file", fixture: "file_commit.json",
			args: `{"owner": "octocat", "repo": "Hello-World", "path": "notes/hello.txt", "content": "", "message": "my commit message",
				"branch": "fix-typo", "sha": "329688480d39049927147c162b9d2deaf885005f"}`,
			wantMethod: http.MethodPut, wantPath: "/repos/octocat/Hello-World/contents/notes/hello.txt", wantOpID: "repos/create-or-update-file-contents",
			wantBody: map[string]any{"message": "my commit message", "content": "", "branch": "fix-typo", "sha": "329688480d39049927147c162b9d2deaf885005f"},
			want:     fileCommit,
		},
		{
			name: "push two files in one commit", tool: "github_push_files",
			args: `{"owner": "octocat", "repo": "Hello-World", "branch": "docs/update", "message": "my commit message",
				"files": [{"path": "README.md", "content": "# Hello\n"}, {"path": "/docs/guide.md", "content": "Guide ✓"}]}`,
			flow: []exchange{
				{method: http.MethodGet, path: "/repos/octocat/Hello-World/git/ref/heads/docs/update", opID: "git/get-ref", fixture: "ref.json"},
				{method: http.MethodGet, path: "/repos/octocat/Hello-World/git/commits/" + helloHead, opID: "git/get-commit", fixture: "git_commit.json"},
				{method: http.MethodPost, path: "/repos/octocat/Hello-World/git/blobs", opID: "git/create-blob", status: http.StatusCreated, fixture: "blob.json",
					body: map[string]any{"content": "# Hello\n", "encoding": "utf-8"}},
				{method: http.MethodPost, path: "/repos/octocat/Hello-World/git/blobs", opID: "git/create-blob", status: http.StatusCreated, fixture: "blob.json",
					body: map[string]any{"content": "Guide ✓", "encoding": "utf-8"}},
				{method: http.MethodPost, path: "/repos/octocat/Hello-World/git/trees", opID: "git/create-tree", status: http.StatusCreated, fixture: "tree.json",
					body: map[string]any{"base_tree": "691272480426f78a0138979dd3ce63b77f706feb", "tree": []any{
						map[string]any{"path": "README.md", "mode": "100644", "type": "blob", "sha": blob},
						map[string]any{"path": "docs/guide.md", "mode": "100644", "type": "blob", "sha": blob},
					}}},
				{method: http.MethodPost, path: "/repos/octocat/Hello-World/git/commits", opID: "git/create-commit", status: http.StatusCreated, fixture: "git_commit_created.json",
					body: map[string]any{"message": "my commit message", "tree": "cd8274d15fa3ae2ab983129fb037999f264ba9a7", "parents": []any{helloHead}}},
				{method: http.MethodPatch, path: "/repos/octocat/Hello-World/git/refs/heads/docs/update", opID: "git/update-ref", fixture: "ref_updated.json",
					body: map[string]any{"sha": "7638417db6d59f3c431d3e1f261cc637155684cd", "force": false}},
			},
			want: github.PushFilesOutput{Ref: "refs/heads/featureA", SHA: "7638417db6d59f3c431d3e1f261cc637155684cd", Message: "my commit message",
				HTMLURL: "https://github.com/octocat/Hello-World/commit/7638417db6d59f3c431d3e1f261cc637155684cd", Parent: helloHead,
				Files: []string{"README.md", "docs/guide.md"}},
		},
	}
}

func TestContentsWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range contentsWriteCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}

// TestPushFilesStopsAtFirstFailure checks that when the branch moved meanwhile (GitHub
// answers 422 to the fast-forward update) the error says so and nothing is retried,
// and that a failure to store a blob stops before any tree, commit or ref is made.
func TestPushFilesStopsAtFirstFailure(t *testing.T) {
	t.Parallel()
	args := `{"owner": "octocat", "repo": "Hello-World", "branch": "main", "message": "m", "files": [{"path": "a.txt", "content": "a"}]}`
	for _, tc := range []struct {
		name      string
		failAt    string // METHOD path suffix that fails
		status    int
		body      string
		wantCode  switchboard.Code
		wantIn    string
		wantSends int
	}{
		{
			name: "branch moved meanwhile", failAt: "PATCH /git/refs/heads/main", status: http.StatusUnprocessableEntity,
			body:     `{"message": "Update is not a fast forward", "documentation_url": "https://docs.github.com/rest/git/refs#update-a-reference", "status": "422"}`,
			wantCode: switchboard.CodeInvalid, wantIn: "the branch did not move", wantSends: 6,
		},
		{
			name: "blob refused", failAt: "POST /git/blobs", status: http.StatusForbidden,
			body:     `{"message": "Resource not accessible by personal access token", "documentation_url": "https://docs.github.com/rest/git/blobs#create-a-blob", "status": "403"}`,
			wantCode: switchboard.CodeForbidden, wantIn: "store a.txt", wantSends: 3,
		},
		{
			name: "branch missing", failAt: "GET /git/ref/heads/main", status: http.StatusNotFound,
			body:     `{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/git/refs#get-a-reference", "status": "404"}`,
			wantCode: switchboard.CodeNotFound, wantIn: "read branch main", wantSends: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ok := map[string]struct {
				status  int
				fixture string
			}{
				"GET /git/ref/heads/main":       {http.StatusOK, "ref.json"},
				"GET /git/commits/" + helloHead: {http.StatusOK, "git_commit.json"},
				"POST /git/blobs":               {http.StatusCreated, "blob.json"},
				"POST /git/trees":               {http.StatusCreated, "tree.json"},
				"POST /git/commits":             {http.StatusCreated, "git_commit_created.json"},
				"PATCH /git/refs/heads/main":    {http.StatusOK, "ref_updated.json"},
			}
			up := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				key := r.Method + " " + strings.TrimPrefix(r.URL.Path, "/repos/octocat/Hello-World")
				if key == tc.failAt {
					answer(tc.status, nil, []byte(tc.body))(w, r)
					return
				}
				a, found := ok[key]
				if !found {
					t.Errorf("unexpected request %s", key)
					w.WriteHeader(http.StatusInternalServerError)
					return
				}
				answer(a.status, nil, fixture(t, a.fixture))(w, r)
			})
			_, err := invoke(t, tools(t)["github_push_files"], newCall(t, up.URL), args)
			var se interface{ ErrorCode() switchboard.Code }
			if !errors.As(err, &se) || switchboard.CodeOf(err) != tc.wantCode || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("error = %v, want code %s containing %q", err, tc.wantCode, tc.wantIn)
			}
			if n := len(up.Requests()); n != tc.wantSends {
				t.Errorf("upstream got %d requests, want %d (no retry, nothing after the failure)", n, tc.wantSends)
			}
			checkRequests(t, up, "")
			providertest.GitHubDescription(t).CheckResponse(t, map[string]string{
				"PATCH /git/refs/heads/main": "git/update-ref", "POST /git/blobs": "git/create-blob", "GET /git/ref/heads/main": "git/get-ref",
			}[tc.failAt], tc.status, []byte(tc.body))
		})
	}
}

// TestWriteRefusesBadInput checks the write operations' own checks: nothing is sent.
func TestWriteRefusesBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		tool      string
		args      string
		wantField string
	}{
		{name: "push: duplicate path", tool: "github_push_files", args: `{"owner": "o", "repo": "r", "branch": "main", "message": "m", "files": [{"path": "a", "content": "1"}, {"path": "/a", "content": "2"}]}`, wantField: "files[1].path"},
		{name: "push: dot-dot path", tool: "github_push_files", args: `{"owner": "o", "repo": "r", "branch": "main", "message": "m", "files": [{"path": "a/../../b", "content": "1"}]}`, wantField: "files[0].path"},
		{name: "push: no files", tool: "github_push_files", args: `{"owner": "o", "repo": "r", "branch": "main", "message": "m", "files": []}`, wantField: "files"},
		{name: "push: branch with dot-dot", tool: "github_push_files", args: `{"owner": "o", "repo": "r", "branch": "a/../b", "message": "m", "files": [{"path": "a", "content": "1"}]}`, wantField: "branch"},
		{name: "push: over 8 MiB in all", tool: "github_push_files", args: oversizedPush(), wantField: "files"},
		{name: "push: blank message", tool: "github_push_files", args: `{"owner": "o", "repo": "r", "branch": "main", "message": "  ", "files": [{"path": "a", "content": "1"}]}`, wantField: "message"},
		{name: "file: root path", tool: "github_create_or_update_file", args: `{"owner": "o", "repo": "r", "path": "/", "content": "x", "message": "m"}`, wantField: "path"},
		{name: "file: short sha", tool: "github_create_or_update_file", args: `{"owner": "o", "repo": "r", "path": "a", "content": "x", "message": "m", "sha": "abc"}`, wantField: "sha"},
		{name: "branch: name with a space", tool: "github_create_branch", args: `{"owner": "o", "repo": "r", "branch": "my branch"}`, wantField: "branch"},
		{name: "branch: from ends with .lock", tool: "github_create_branch", args: `{"owner": "o", "repo": "r", "branch": "b", "from_branch": "main.lock"}`, wantField: "from_branch"},
		{name: "repository: name with a slash", tool: "github_create_repository", args: `{"name": "a/b"}`, wantField: "name"},
		{name: "commit: ref with a query", tool: "github_get_commit", args: `{"owner": "o", "repo": "r", "ref": "main?x=1"}`, wantField: "ref"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, answer(http.StatusOK, nil, []byte(`{}`)))
			_, err := invoke(t, tools(t)[tc.tool], newCall(t, up.URL), tc.args)
			var se *switchboard.Error
			if !errors.As(err, &se) || se.Code != switchboard.CodeInvalid || se.Field != tc.wantField {
				t.Fatalf("error = %v, want invalid on field %s", err, tc.wantField)
			}
			if n := len(up.Requests()); n != 0 {
				t.Errorf("upstream got %d requests, want none", n)
			}
		})
	}
}

// oversizedPush returns push_files arguments whose nine files of 1 MiB each are
// within the per-file bound but over the 8 MiB a call may write in all.
func oversizedPush() string {
	var files []string
	for i := range 9 {
		files = append(files, fmt.Sprintf(`{"path": "f%d.txt", "content": %q}`, i, strings.Repeat("x", 1<<20)))
	}
	return `{"owner": "o", "repo": "r", "branch": "main", "message": "m", "files": [` + strings.Join(files, ",") + `]}`
}
