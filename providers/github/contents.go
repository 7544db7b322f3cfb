package github

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// maxFileBytes is the largest file get_file_contents returns as text.
const maxFileBytes = 1 << 20

// GetFileContents reads a text file, or lists a directory, of a repository.
// GitHub API docs: https://docs.github.com/rest/repos/contents#get-repository-content
var GetFileContents = &providers.Operation[GetFileContentsInput, GetFileContentsOutput]{
	Name:  "get_file_contents",
	Title: "Get file contents",
	Description: "Read one file of a repository as text, or list a directory. For a file, type is \"file\" and content " +
		"holds its UTF-8 text; for a directory, type is \"dir\" and entries lists its files and subdirectories " +
		"(call again with an entry's path to go deeper). Binary files and files over 1 MiB are refused with an " +
		"invalid path error that gives the file's download_url. A symlink returns its target; a submodule its git " +
		"URL. Returns type, path, sha (pass it to create_or_update_file to replace the file), and content or " +
		"entries.",
	DocsURL: "https://docs.github.com/rest/repos/contents#get-repository-content",
	Scopes:  []string{"repo"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getFileContents,
}

// GetFileContentsInput is the input of get_file_contents.
type GetFileContentsInput struct {
	Owner string  `json:"owner" jsonschema:"Owner's login, e.g. octocat" schema:"minLength=1,maxLength=100,example=octocat"`
	Repo  string  `json:"repo" jsonschema:"Repository name without the owner, e.g. Hello-World" schema:"minLength=1,maxLength=100,example=Hello-World"`
	Path  string  `json:"path" jsonschema:"File or directory path from the repository root, without a leading slash, e.g. docs/README.md; empty for the root directory" schema:"example=docs/README.md"`
	Ref   *string `json:"ref,omitempty" jsonschema:"Branch, tag or commit SHA to read; omit for the default branch" schema:"minLength=1,example=main"`
}

// GetFileContentsOutput is a file's text or a directory's entries.
type GetFileContentsOutput struct {
	Type         string         `json:"type,omitempty" jsonschema:"What path is" schema:"enum=file|dir|symlink|submodule"`
	Path         string         `json:"path" jsonschema:"Path from the repository root; empty for the root directory"`
	Name         string         `json:"name" jsonschema:"Last element of path; empty for the root directory"`
	SHA          string         `json:"sha,omitempty" jsonschema:"Git blob or tree SHA; pass a file's sha when updating it"`
	Size         int            `json:"size" jsonschema:"Size in bytes (files)"`
	Content      *string        `json:"content,omitempty" jsonschema:"The file's text (type file)"`
	Target       *string        `json:"target,omitempty" jsonschema:"Where the symlink points (type symlink)"`
	SubmoduleURL *string        `json:"submodule_git_url,omitempty" jsonschema:"Git URL of the submodule (type submodule)"`
	HTMLURL      string         `json:"html_url,omitempty" jsonschema:"Web page of the file or directory"`
	DownloadURL  string         `json:"download_url,omitempty" jsonschema:"Raw download URL of the file, without GitHub's temporary token (a private repository's file needs the account's access)"`
	Entries      []ContentEntry `json:"entries" jsonschema:"Directory entries (type dir); empty for other types"`
}

// ContentEntry is one entry of a directory.
type ContentEntry struct {
	Type string `json:"type" jsonschema:"file, dir, symlink or submodule" schema:"enum=file|dir|symlink|submodule"`
	Name string `json:"name" jsonschema:"Entry name"`
	Path string `json:"path" jsonschema:"Path from the repository root; pass it as path to read the entry"`
	Size int    `json:"size" jsonschema:"Size in bytes (0 for directories)"`
	SHA  string `json:"sha" jsonschema:"Git blob or tree SHA"`
}

// ghContent is GitHub's content-file / content-symlink / content-submodule object, and
// an entry of content-directory.
type ghContent struct {
	Type            string  `json:"type"`
	Encoding        string  `json:"encoding"`
	Size            int     `json:"size"`
	Name            string  `json:"name"`
	Path            string  `json:"path"`
	Content         *string `json:"content"`
	SHA             string  `json:"sha"`
	HTMLURL         *string `json:"html_url"`
	Target          *string `json:"target"`
	SubmoduleGitURL *string `json:"submodule_git_url"`
	DownloadURL     *string `json:"download_url"`
}

func getFileContents(ctx context.Context, c *providers.Call, in GetFileContentsInput) (GetFileContentsOutput, error) {
	p, err := contentsPath(in.Owner, in.Repo, in.Path)
	if err != nil {
		return GetFileContentsOutput{}, err
	}
	q := url.Values{}
	setOpt(q, "ref", in.Ref)
	var raw json.RawMessage
	if _, err := (request{method: http.MethodGet, path: p, query: q}).do(ctx, c, &raw); err != nil {
		return GetFileContentsOutput{}, err
	}
	// A directory is an array of entries; anything else is one object.
	if trimmed := bytes.TrimLeft(raw, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		var entries []ghContent
		if err := decodeRaw(raw, &entries); err != nil {
			return GetFileContentsOutput{}, err
		}
		return directory(in.Path, entries), nil
	}
	var f ghContent
	if err := decodeRaw(raw, &f); err != nil {
		return GetFileContentsOutput{}, err
	}
	return file(f)
}

// contentsPath builds /repos/{owner}/{repo}/contents/{path}, escaping each segment of
// path and refusing dot segments, so the path cannot leave the contents endpoint.
func contentsPath(owner, repo, path string) (string, error) {
	var segs []string
	if trimmed := strings.Trim(path, "/"); trimmed != "" {
		segs = strings.Split(trimmed, "/")
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return "", switchboard.Invalid("path", "must be a path from the repository root without empty, '.' or '..' segments, e.g. src/main.go")
		}
	}
	p, err := repoPath(owner, repo, append([]string{"contents"}, segs...)...)
	if err != nil {
		return "", err
	}
	if len(segs) == 0 {
		p += "/" // the root directory: GET /repos/{owner}/{repo}/contents/
	}
	return p, nil
}

// directory lists a directory's entries.
func directory(path string, entries []ghContent) GetFileContentsOutput {
	path = strings.Trim(path, "/")
	out := GetFileContentsOutput{Type: "dir", Path: path, Name: path[strings.LastIndex(path, "/")+1:], Entries: make([]ContentEntry, 0, len(entries))}
	for _, e := range entries {
		out.Entries = append(out.Entries, ContentEntry{Type: e.Type, Name: e.Name, Path: e.Path, Size: e.Size, SHA: e.SHA})
	}
	return out
}

// file decodes a file's base64 content into text, refusing binary or oversized files;
// symlinks and submodules are described.
func file(f ghContent) (GetFileContentsOutput, error) {
	out := GetFileContentsOutput{Type: f.Type, Path: f.Path, Name: f.Name, SHA: f.SHA, Size: f.Size, HTMLURL: deref(f.HTMLURL),
		DownloadURL: withoutQuery(deref(f.DownloadURL)), Entries: []ContentEntry{}}
	switch f.Type {
	case "symlink":
		out.Target = f.Target
		return out, nil
	case "submodule":
		out.SubmoduleURL = f.SubmoduleGitURL
		return out, nil
	case "file":
	default:
		return GetFileContentsOutput{}, &providers.UpstreamError{Provider: providerName, Status: http.StatusOK, Code: switchboard.CodeUpstream,
			Message: fmt.Sprintf("GitHub answered a content of unknown type %q", f.Type)}
	}
	// Files over 1 MB come with encoding "none" and no content.
	if f.Size > maxFileBytes || f.Encoding == "none" {
		return GetFileContentsOutput{}, switchboard.Invalid("path", fmt.Sprintf("is a file of %d bytes; this tool returns text files up to %d bytes (1 MiB)%s", f.Size, maxFileBytes, fetchHint(out.DownloadURL)))
	}
	if f.Encoding != "base64" || f.Content == nil {
		return GetFileContentsOutput{}, &providers.UpstreamError{Provider: providerName, Status: http.StatusOK, Code: switchboard.CodeUpstream,
			Message: fmt.Sprintf("GitHub answered the file with encoding %q, not base64", f.Encoding)}
	}
	// GitHub wraps the base64 text at 60 columns.
	data, err := base64.StdEncoding.DecodeString(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, *f.Content))
	if err != nil {
		return GetFileContentsOutput{}, &providers.UpstreamError{Provider: providerName, Status: http.StatusOK, Code: switchboard.CodeUpstream,
			Message: "GitHub answered file content that is not valid base64: " + err.Error()}
	}
	if len(data) > maxFileBytes {
		return GetFileContentsOutput{}, switchboard.Invalid("path", fmt.Sprintf("is a file of %d bytes; this tool returns text files up to %d bytes (1 MiB)%s", len(data), maxFileBytes, fetchHint(out.DownloadURL)))
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return GetFileContentsOutput{}, switchboard.Invalid("path", fmt.Sprintf("is a binary file (%d bytes); this tool returns text files only%s", len(data), fetchHint(out.DownloadURL)))
	}
	text := string(data)
	out.Content = &text
	out.Size = len(data)
	return out, nil
}

// fetchHint tells an agent where a refused file can be downloaded instead.
func fetchHint(downloadURL string) string {
	if downloadURL == "" {
		return ""
	}
	return "; download it from " + downloadURL + " (private repositories need the account's access), or read a smaller text file"
}

// withoutQuery drops the query of a URL: GitHub puts a temporary access token in the
// download_url of a private repository's file, and no token may reach an agent.
func withoutQuery(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		return u[:i]
	}
	return u
}
