package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListGists lists the authenticated user's gists.
// GitHub API docs: https://docs.github.com/rest/gists/gists#list-gists-for-the-authenticated-user
var ListGists = &providers.Operation[ListGistsInput, ListGistsOutput]{
	Name:  "list_gists",
	Title: "List gists",
	Description: "List the token user's gists (public and secret), most recently updated first: id, description, visibility " +
		"and file names, without the files' content (read one with get_gist). Returns a page of them.",
	DocsURL: "https://docs.github.com/rest/gists/gists#list-gists-for-the-authenticated-user",
	Scopes:  []string{"gist"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listGists,
}

// GetGist reads a gist with its files' content.
// GitHub API docs: https://docs.github.com/rest/gists/gists#get-a-gist
var GetGist = &providers.Operation[GetGistInput, Gist]{
	Name:  "get_gist",
	Title: "Get gist",
	Description: "Read one gist by id with the text of each of its files (a file over 1 MB comes truncated: truncated is " +
		"true and raw_url gives the whole file). Returns the gist.",
	DocsURL: "https://docs.github.com/rest/gists/gists#get-a-gist",
	Scopes:  []string{"gist"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getGist,
}

// CreateGist creates a gist.
// GitHub API docs: https://docs.github.com/rest/gists/gists#create-a-gist
var CreateGist = &providers.Operation[CreateGistInput, Gist]{
	Name:  "create_gist",
	Title: "Create gist",
	Description: "Share text files, such as a snippet, log excerpt or note, as a new gist of the token user, secret (anyone " +
		"with the link can see it) unless public. Each call creates another gist. Needs the gist scope. Returns " +
		"the gist with its id and html_url.",
	DocsURL: "https://docs.github.com/rest/gists/gists#create-a-gist",
	Scopes:  []string{"gist"},
	Hints:   providers.Hints{},
	Run:     createGist,
}

// ListGistsInput is the input of list_gists.
type ListGistsInput struct {
	Since *string `json:"since,omitempty" jsonschema:"Only gists updated at or after this time, e.g. 2024-05-01T00:00:00Z" schema:"format=date-time,example=2024-05-01T00:00:00Z"`
	providers.PageInput
}

// ListGistsOutput is one page of gists.
type ListGistsOutput struct {
	Gists      []Gist `json:"gists" jsonschema:"The gists on this page, files without content"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"Cursor for the next page; absent on the last page"`
}

// GetGistInput is the input of get_gist.
type GetGistInput struct {
	GistID string `json:"gist_id" jsonschema:"Gist ID, the hex string at the end of its URL, e.g. aa5a315d61ae9438b18d" schema:"minLength=1,maxLength=64,example=aa5a315d61ae9438b18d,pattern=^[0-9a-zA-Z]+$"`
}

// CreateGistInput is the input of create_gist.
type CreateGistInput struct {
	Description *string    `json:"description,omitempty" jsonschema:"What the gist is, e.g. Example Ruby script" schema:"maxLength=1024,example=Example Ruby script"`
	Public      *bool      `json:"public,omitempty" jsonschema:"Make it public (listed on the user's profile); secret gists are only unlisted" schema:"default=false"`
	Files       []GistFile `json:"files" jsonschema:"The files, each with a name and its text" schema:"minItems=1,maxItems=20"`
}

// GistFile is one file of a new gist.
type GistFile struct {
	Filename string `json:"filename" jsonschema:"File name with extension, which sets the highlighting, e.g. hello.rb" schema:"minLength=1,maxLength=255,example=hello.rb"`
	Content  string `json:"content" jsonschema:"The file's text, e.g. puts 'Hello'" schema:"minLength=1,maxLength=1048576,example=puts 'Hello'"`
}

// Gist is a gist.
type Gist struct {
	ID          string        `json:"id" jsonschema:"Gist ID"`
	Description string        `json:"description" jsonschema:"Description; empty when none"`
	Public      bool          `json:"public" jsonschema:"True for a public gist, false for a secret one"`
	Owner       string        `json:"owner,omitempty" jsonschema:"Login of the owner"`
	HTMLURL     string        `json:"html_url" jsonschema:"Web page of the gist"`
	Files       []GistContent `json:"files" jsonschema:"Its files, by name"`
	CreatedAt   string        `json:"created_at" jsonschema:"When it was created (RFC 3339)"`
	UpdatedAt   string        `json:"updated_at" jsonschema:"When it last changed (RFC 3339)"`
}

// GistContent is a file of a gist.
type GistContent struct {
	Filename  string  `json:"filename" jsonschema:"File name"`
	Language  string  `json:"language,omitempty" jsonschema:"Language GitHub detected"`
	Size      int     `json:"size" jsonschema:"Size in bytes"`
	RawURL    string  `json:"raw_url" jsonschema:"Where the whole file can be downloaded"`
	Content   *string `json:"content,omitempty" jsonschema:"The file's text (get_gist and create_gist; absent in lists)"`
	Truncated bool    `json:"truncated,omitempty" jsonschema:"True when content was cut at 1 MB; download raw_url for the rest"`
}

// ghGist is the part of GitHub's gist objects we read.
type ghGist struct {
	ID          string  `json:"id"`
	Description *string `json:"description"`
	Public      bool    `json:"public"`
	Owner       *ghUser `json:"owner"`
	HTMLURL     string  `json:"html_url"`
	Files       map[string]*struct {
		Filename  string  `json:"filename"`
		Language  *string `json:"language"`
		Size      int     `json:"size"`
		RawURL    string  `json:"raw_url"`
		Content   *string `json:"content"`
		Truncated bool    `json:"truncated"`
	} `json:"files"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func (g ghGist) output() Gist {
	out := Gist{ID: g.ID, Description: deref(g.Description), Public: g.Public, Owner: login(g.Owner), HTMLURL: g.HTMLURL,
		Files: make([]GistContent, 0, len(g.Files)), CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
	for _, name := range slices.Sorted(mapKeys(g.Files)) {
		f := g.Files[name]
		if f == nil {
			continue
		}
		out.Files = append(out.Files, GistContent{Filename: f.Filename, Language: deref(f.Language), Size: f.Size, RawURL: f.RawURL,
			Content: f.Content, Truncated: f.Truncated})
	}
	return out
}

// mapKeys yields the keys of m.
func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func listGists(ctx context.Context, c *providers.Call, in ListGistsInput) (ListGistsOutput, error) {
	q, err := pageQuery(in.PageInput)
	if err != nil {
		return ListGistsOutput{}, err
	}
	if in.Since != nil {
		if _, err := time.Parse(time.RFC3339, *in.Since); err != nil {
			return ListGistsOutput{}, switchboard.Invalid("since", "must be an RFC 3339 time such as 2024-05-01T00:00:00Z")
		}
		q.Set("since", *in.Since)
	}
	var res []ghGist
	h, err := request{method: http.MethodGet, path: "/gists", query: q}.do(ctx, c, &res)
	if err != nil {
		return ListGistsOutput{}, err
	}
	out := ListGistsOutput{Gists: make([]Gist, 0, len(res)), NextCursor: nextCursor(h, q)}
	for _, g := range res {
		out.Gists = append(out.Gists, g.output())
	}
	return out, nil
}

func getGist(ctx context.Context, c *providers.Call, in GetGistInput) (Gist, error) {
	if in.GistID == "" || strings.ContainsFunc(in.GistID, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		return Gist{}, switchboard.Invalid("gist_id", "must be a gist ID: letters and digits only, e.g. aa5a315d61ae9438b18d")
	}
	var res ghGist
	if _, err := (request{method: http.MethodGet, path: "/gists/" + url.PathEscape(in.GistID)}).do(ctx, c, &res); err != nil {
		return Gist{}, err
	}
	return res.output(), nil
}

// createGistBody is the JSON body of POST /gists.
type createGistBody struct {
	Description *string                      `json:"description,omitempty"`
	Public      *bool                        `json:"public,omitempty"`
	Files       map[string]map[string]string `json:"files"`
}

func createGist(ctx context.Context, c *providers.Call, in CreateGistInput) (Gist, error) {
	if len(in.Files) == 0 {
		return Gist{}, switchboard.Invalid("files", "give at least one file")
	}
	files := map[string]map[string]string{}
	for i, f := range in.Files {
		switch {
		case strings.TrimSpace(f.Filename) == "" || strings.ContainsAny(f.Filename, "/\\"):
			return Gist{}, switchboard.Invalid(fmt.Sprintf("files[%d].filename", i), "must be a file name without slashes, e.g. hello.rb")
		case files[f.Filename] != nil:
			return Gist{}, switchboard.Invalid(fmt.Sprintf("files[%d].filename", i), "names "+f.Filename+" a second time; give each file once")
		case strings.TrimSpace(f.Content) == "":
			return Gist{}, switchboard.Invalid(fmt.Sprintf("files[%d].content", i), "must not be blank: GitHub refuses empty gist files")
		}
		files[f.Filename] = map[string]string{"content": f.Content}
	}
	var res ghGist
	body := createGistBody{Description: in.Description, Public: in.Public, Files: files}
	if _, err := (request{method: http.MethodPost, path: "/gists", body: body}).do(ctx, c, &res); err != nil {
		return Gist{}, err
	}
	return res.output(), nil
}
