package github_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers/github"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

func getFileContentsCases() []opCase {
	dirEntries := []github.ContentEntry{
		{Type: "file", Name: "octokit.rb", Path: "lib/octokit.rb", Size: 625, SHA: "fff6fe3a23bf1c8ea0692b4a883af99bee26fd3b"},
		{Type: "dir", Name: "octokit", Path: "lib/octokit", SHA: "a84d88e7554fc1fa21bcbc4efae3c782a70d2b9d"},
	}
	return []opCase{
		{
			name: "text file at a ref", tool: "github_get_file_contents", fixture: "file.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "path": "README.md", "ref": "v1.0"}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/contents/README.md",
			wantQuery: url.Values{"ref": {"v1.0"}},
			wantOpID:  "repos/get-content",
			want: github.GetFileContentsOutput{
				Type: "file", Path: "README.md", Name: "README.md", SHA: "980a0d5f19a64b4b30a87d4206aade58726b60e3",
				Size:        88,
				Content:     ptr("# Hello-World\n\nMy first repository on GitHub — ünïcödé welcome.\n\nRun `make test`.\n"),
				HTMLURL:     "https://github.com/octocat/Hello-World/blob/master/README.md",
				DownloadURL: "https://raw.githubusercontent.com/octocat/Hello-World/master/README.md", Entries: []github.ContentEntry{},
			},
		},
		{
			name: "directory", tool: "github_get_file_contents", fixture: "dir.json",
			args:       `{"owner": "octokit", "repo": "octokit.rb", "path": "lib"}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octokit/octokit.rb/contents/lib",
			wantOpID: "repos/get-content",
			want:     github.GetFileContentsOutput{Type: "dir", Path: "lib", Name: "lib", Entries: dirEntries},
		},
		{
			name: "root directory", tool: "github_get_file_contents", fixture: "dir.json",
			args:       `{"owner": "octokit", "repo": "octokit.rb", "path": ""}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octokit/octokit.rb/contents/",
			wantOpID: "repos/get-content",
			want:     github.GetFileContentsOutput{Type: "dir", Entries: dirEntries},
		},
		{
			name: "nested path with a space is escaped per segment", tool: "github_get_file_contents", fixture: "file.json",
			args:       `{"owner": "octocat", "repo": "Hello-World", "path": "/docs/user guide/README.md"}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octocat/Hello-World/contents/docs/user guide/README.md",
			wantOpID: "repos/get-content",
			want: github.GetFileContentsOutput{
				Type: "file", Path: "README.md", Name: "README.md", SHA: "980a0d5f19a64b4b30a87d4206aade58726b60e3",
				Size:        88,
				Content:     ptr("# Hello-World\n\nMy first repository on GitHub — ünïcödé welcome.\n\nRun `make test`.\n"),
				HTMLURL:     "https://github.com/octocat/Hello-World/blob/master/README.md",
				DownloadURL: "https://raw.githubusercontent.com/octocat/Hello-World/master/README.md", Entries: []github.ContentEntry{},
			},
		},
		{
			name: "symlink", tool: "github_get_file_contents", fixture: "symlink.json",
			args:       `{"owner": "octokit", "repo": "octokit.rb", "path": "bin/some-symlink"}`,
			wantMethod: http.MethodGet, wantPath: "/repos/octokit/octokit.rb/contents/bin/some-symlink",
			wantOpID: "repos/get-content",
			want: github.GetFileContentsOutput{
				Type: "symlink", Path: "bin/some-symlink", Name: "some-symlink", SHA: "452a98979c88e093d682cab404a3ec82babebb48",
				Size: 23, Target: ptr("/path/to/symlink/target"), HTMLURL: "https://github.com/octokit/octokit.rb/blob/master/bin/some-symlink",
				DownloadURL: "https://raw.githubusercontent.com/octokit/octokit.rb/master/bin/some-symlink",
				Entries:     []github.ContentEntry{},
			},
		},
	}
}

func TestGetFileContents(t *testing.T) {
	t.Parallel()
	for _, tc := range getFileContentsCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}

// TestGetFileContentsRefuses checks that binary and oversized files, and paths that
// would leave the contents endpoint, are refused as invalid on the path field, with a
// message that says why.
func TestGetFileContentsRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		args      string
		fixture   string // "" when nothing may be sent
		wantField string
		wantIn    string
	}{
		{name: "binary file", args: `{"owner": "octocat", "repo": "Hello-World", "path": "docs/logo.png"}`, fixture: "file_binary.json", wantField: "path",
			wantIn: "is a binary file (33 bytes); this tool returns text files only; download it from https://raw.githubusercontent.com/octocat/Hello-World/master/docs/logo.png (private"},
		{name: "file over 1 MiB", args: `{"owner": "octocat", "repo": "Hello-World", "path": "data/data.csv"}`, fixture: "file_large.json", wantField: "path",
			wantIn: "2345678 bytes; this tool returns text files up to 1048576 bytes (1 MiB); download it from https://raw.githubusercontent.com/octocat/Hello-World/master/data/data.csv"},
		{name: "dot-dot segment", args: `{"owner": "octocat", "repo": "Hello-World", "path": "docs/../../../user"}`, wantField: "path", wantIn: "'..'"},
		{name: "repo with a slash", args: `{"owner": "octocat", "repo": "Hello-World/issues", "path": "README.md"}`, wantField: "repo", wantIn: "without slashes"},
		{name: "owner dot-dot", args: `{"owner": "..", "repo": "x", "path": "README.md"}`, wantField: "owner", wantIn: "not a GitHub name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var body []byte
			if tc.fixture != "" {
				body = fixture(t, tc.fixture)
			}
			up := providertest.NewUpstream(t, answer(http.StatusOK, nil, body))
			_, err := invoke(t, tools(t)["github_get_file_contents"], newCall(t, up.URL), tc.args)
			var se *switchboard.Error
			if !errors.As(err, &se) || se.Code != switchboard.CodeInvalid || se.Field != tc.wantField || !strings.Contains(se.Message, tc.wantIn) {
				t.Fatalf("error = %v, want invalid %s containing %q", err, tc.wantField, tc.wantIn)
			}
			if strings.Contains(err.Error(), "token=") || strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q carries the download URL's token", err)
			}
			n := len(up.Requests())
			switch {
			case tc.fixture == "" && n != 0:
				t.Errorf("upstream got %d requests, want none", n)
			case tc.fixture != "" && n != 1:
				t.Errorf("upstream got %d requests, want 1", n)
			}
			if tc.fixture != "" {
				ids := checkRequests(t, up, "")
				providertest.GitHubDescription(t).CheckResponse(t, ids[0], http.StatusOK, body)
			}
		})
	}
}
