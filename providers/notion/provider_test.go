package notion_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/notion"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

func TestSpec(t *testing.T) {
	t.Parallel()
	spec := notion.Spec()
	if spec.BaseURL != "https://api.notion.com/v1" || spec.TokenHelp == "" || spec.Verify == nil {
		t.Errorf("spec base URL %q, token help %q, verify set %v", spec.BaseURL, spec.TokenHelp, spec.Verify != nil)
	}
	wantOAuth := &providers.OAuth2{
		AuthURL: "https://api.notion.com/v1/oauth/authorize", TokenURL: "https://api.notion.com/v1/oauth/token",
		AuthParams: map[string]string{"owner": "user"}, BasicAuth: true,
	}
	if diff := cmp.Diff(wantOAuth, spec.OAuth); diff != "" {
		t.Errorf("oauth (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]providers.AuthKind{providers.AuthAPIKey, providers.AuthOAuth2}, spec.AuthKinds); diff != "" {
		t.Errorf("auth kinds (-want +got):\n%s", diff)
	}
	var names []string
	for name := range tools(t) {
		names = append(names, name)
	}
	want := []string{"notion_add_comment", "notion_append_block_children", "notion_create_page", "notion_get_block_children",
		"notion_get_database", "notion_get_page", "notion_query_database", "notion_search", "notion_update_page"}
	slices.Sort(names)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// TestHints pins each tool's annotations: they decide whether a client asks before a
// call and whether the client kit retries it.
func TestHints(t *testing.T) {
	t.Parallel()
	read := providers.Hints{ReadOnly: true, Idempotent: true}
	for name, want := range map[string]providers.Hints{
		"notion_search": read, "notion_get_page": read, "notion_query_database": read, "notion_get_database": read,
		"notion_get_block_children": read,
		"notion_create_page":        {}, "notion_append_block_children": {}, "notion_add_comment": {},
		"notion_update_page": {Destructive: true, Idempotent: true},
	} {
		tool := tools(t)[name]
		if tool == nil {
			t.Errorf("no tool %s", name)
			continue
		}
		if tool.Info.Hints != want {
			t.Errorf("%s hints = %+v, want %+v", name, tool.Info.Hints, want)
		}
	}
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	providertest.CheckCatalog(t, notion.Spec())
}

func TestGoldenSchemas(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := r.Register(notion.Spec()); err != nil {
		t.Fatalf("register: %v", err)
	}
	providertest.GoldenSchemas(t, r.Tools("notion"))
}

func TestVerify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		status   int
		body     []byte
		want     providers.Account
		wantCode switchboard.Code
	}{
		{name: "bot user names the workspace", status: http.StatusOK, body: fixture(t, "users_me.json"),
			want: providers.Account{ID: "16d84278-ab0e-484c-9bdd-b35da3bd8905", Label: "Acme Corp"}},
		{name: "without a workspace name the bot's name", status: http.StatusOK,
			body: []byte(`{"object": "user", "id": "16d84278-ab0e-484c-9bdd-b35da3bd8905", "name": "Switchboard", "type": "bot", "bot": {}}`),
			want: providers.Account{ID: "16d84278-ab0e-484c-9bdd-b35da3bd8905", Label: "Switchboard"}},
		{name: "a person is not an integration", status: http.StatusOK,
			body:     []byte(`{"object": "user", "id": "0c3e9826-b8f7-4f73-927d-2caaf86f1103", "name": "Ada", "type": "person", "person": {}}`),
			wantCode: switchboard.CodeUpstream},
		{name: "revoked token", status: http.StatusUnauthorized,
			body:     []byte(`{"object": "error", "status": 401, "code": "unauthorized", "message": "API token is invalid.", "request_id": "e3c1b9f4-1d2e-4f5a-8b6c-7d8e9f0a1b2c"}`),
			wantCode: switchboard.CodeReconnect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, answer(tc.status, nil, tc.body))
			spec := notion.Spec()
			got, err := spec.Verify(context.Background(), providertest.NewCall(t, &spec, up.URL, testToken))
			if code := switchboard.CodeOf(err); code != tc.wantCode {
				t.Fatalf("error = %v, want code %q", err, tc.wantCode)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("account (-want +got):\n%s", diff)
			}
			req := up.Last(t)
			checkHeaders(t, req)
			if req.Method != http.MethodGet || req.Path != "/users/me" {
				t.Errorf("request = %s %s, want GET /users/me", req.Method, req.Path)
			}
		})
	}
}

// TestFailures maps Notion's error objects, answered the way Notion answers them, to
// codes an agent can act on, and checks that reads are retried and writes sent once.
func TestFailures(t *testing.T) {
	t.Parallel()
	const (
		getPage    = `{"page_id": "59833787-2cf9-4fdf-8782-e53db20768a5"}`
		createPage = `{"parent_page_id": "59833787-2cf9-4fdf-8782-e53db20768a5", "title": "Notes"}`
	)
	errBody := func(status int, code, msg string) string {
		return `{"object": "error", "status": ` + itoa(status) + `, "code": "` + code + `", "message": "` + msg + `", "request_id": "6a1f3c2e-9b8d-4e7f-a6b5-c4d3e2f1a0b9"}`
	}
	for _, tc := range []struct {
		name         string
		tool, args   string
		status       int
		header       http.Header
		body         string
		wantCode     switchboard.Code
		wantReason   string
		wantIn       string
		wantRetry    time.Duration
		wantAttempts int
	}{
		{name: "401 unauthorized", tool: "notion_get_page", args: getPage, status: 401, body: errBody(401, "unauthorized", "API token is invalid."),
			wantCode: switchboard.CodeReconnect, wantReason: "unauthorized", wantIn: "reconnect Notion", wantAttempts: 1},
		{name: "403 restricted resource", tool: "notion_create_page", args: createPage, status: 403,
			body:     errBody(403, "restricted_resource", "Insufficient permissions for this endpoint."),
			wantCode: switchboard.CodeForbidden, wantReason: "restricted_resource", wantIn: "capability", wantAttempts: 1},
		{name: "404 not shared", tool: "notion_get_page", args: getPage, status: 404,
			body:     errBody(404, "object_not_found", "Could not find page with ID: 59833787-2cf9-4fdf-8782-e53db20768a5. Make sure the relevant pages and databases are shared with your integration."),
			wantCode: switchboard.CodeNotFound, wantReason: "object_not_found", wantIn: "share them with it", wantAttempts: 1},
		{name: "400 validation error", tool: "notion_create_page", args: createPage, status: 400,
			body:     errBody(400, "validation_error", "body failed validation: body.properties.title.title[0].text.content.length should be ≤ `2000`, instead was `2001`."),
			wantCode: switchboard.CodeInvalid, wantReason: "validation_error", wantIn: "body failed validation", wantAttempts: 1},
		{name: "409 conflict", tool: "notion_create_page", args: createPage, status: 409,
			body:     errBody(409, "conflict_error", "Conflict occurred while saving. Please try again."),
			wantCode: switchboard.CodeConflict, wantReason: "conflict_error", wantIn: "read it again", wantAttempts: 1},
		{name: "429 with Retry-After", tool: "notion_get_page", args: getPage, status: 429, header: http.Header{"Retry-After": {"30"}},
			body:     errBody(429, "rate_limited", "You have been rate limited. Please try again in a few minutes."),
			wantCode: switchboard.CodeRateLimited, wantReason: "rate_limited", wantRetry: 30 * time.Second, wantAttempts: 1},
		{name: "500 on a read is retried", tool: "notion_get_page", args: getPage, status: 500,
			body:     errBody(500, "internal_server_error", "Unexpected error occurred."),
			wantCode: switchboard.CodeUpstream, wantReason: "internal_server_error", wantIn: "try again shortly", wantAttempts: 3},
		{name: "503 on a create is sent once", tool: "notion_create_page", args: createPage, status: 503,
			body:     errBody(503, "service_unavailable", "Notion is unavailable, please try again later."),
			wantCode: switchboard.CodeUpstream, wantReason: "service_unavailable", wantAttempts: 1},
		{name: "502 from a proxy, not JSON", tool: "notion_create_page", args: createPage, status: 502,
			header: http.Header{"Content-Type": {"text/html"}}, body: "<html>Bad Gateway</html>",
			wantCode: switchboard.CodeUpstream, wantIn: "Bad Gateway", wantAttempts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, answer(tc.status, tc.header, []byte(tc.body)))
			_, err := providertest.Invoke(t, tools(t)[tc.tool], newCall(t, up.URL), tc.args)
			var ue *providers.UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("error = %v (%T), want an UpstreamError", err, err)
			}
			if ue.Code != tc.wantCode || ue.Reason != tc.wantReason || ue.Status != tc.status {
				t.Errorf("error = code %q reason %q status %d, want %q %q %d", ue.Code, ue.Reason, ue.Status, tc.wantCode, tc.wantReason, tc.status)
			}
			if !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("error %q does not contain %q", err, tc.wantIn)
			}
			if ue.RetryAfter != tc.wantRetry {
				t.Errorf("retry after = %v, want %v", ue.RetryAfter, tc.wantRetry)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error %q holds the token", err)
			}
			if n := len(up.Requests()); n != tc.wantAttempts {
				t.Errorf("upstream got %d requests, want %d", n, tc.wantAttempts)
			}
		})
	}
}

// TestBadInput checks that bad arguments fail as invalid on the field at fault, by the
// schema or by the operation, before anything is sent.
func TestBadInput(t *testing.T) {
	t.Parallel()
	const id = "59833787-2cf9-4fdf-8782-e53db20768a5"
	for _, tc := range []struct {
		name, tool, args, wantField string
	}{
		{name: "page ID with a path in it", tool: "notion_get_page", args: `{"page_id": "../users/me"}`, wantField: "page_id"},
		{name: "page ID too short", tool: "notion_get_page", args: `{"page_id": "598337872cf94fdf"}`, wantField: "page_id"},
		{name: "URL without an ID", tool: "notion_get_page", args: `{"page_id": "https://www.notion.so/acme/Roadmap"}`, wantField: "page_id"},
		{name: "create without a parent", tool: "notion_create_page", args: `{"title": "x"}`, wantField: "parent_page_id"},
		{name: "create with two parents", tool: "notion_create_page", args: `{"parent_page_id": "` + id + `", "database_id": "` + id + `"}`, wantField: "database_id"},
		{name: "columns under a page", tool: "notion_create_page", args: `{"parent_page_id": "` + id + `", "properties": {"Price": {"number": 1}}}`, wantField: "properties"},
		{name: "title twice", tool: "notion_create_page", args: `{"database_id": "` + id + `", "title": "a", "properties": {"title": {"title": []}}}`, wantField: "title"},
		{name: "too many blocks", tool: "notion_create_page", args: `{"parent_page_id": "` + id + `", "content": "a\n\nb", "children": [` + strings.Repeat(`{"type": "divider", "divider": {}},`, 99) + `{"type": "divider", "divider": {}}]}`, wantField: "children"},
		{name: "update with nothing to change", tool: "notion_update_page", args: `{"page_id": "` + id + `"}`, wantField: "arguments"},
		{name: "append nothing", tool: "notion_append_block_children", args: `{"block_id": "` + id + `", "text": "  \n\n "}`, wantField: "text"},
		{name: "append after a bad ID", tool: "notion_append_block_children", args: `{"block_id": "` + id + `", "text": "x", "after": "nope"}`, wantField: "after"},
		{name: "comment without a target", tool: "notion_add_comment", args: `{"text": "hi"}`, wantField: "page_id"},
		{name: "comment with two targets", tool: "notion_add_comment", args: `{"page_id": "` + id + `", "discussion_id": "` + id + `", "text": "hi"}`, wantField: "discussion_id"},
		{name: "empty comment", tool: "notion_add_comment", args: `{"page_id": "` + id + `", "text": ""}`, wantField: "text"},
		{name: "search object outside the enum", tool: "notion_search", args: `{"object": "block"}`, wantField: "object"},
		{name: "limit over Notion's maximum", tool: "notion_query_database", args: `{"database_id": "` + id + `", "limit": 101}`, wantField: "limit"},
		{name: "foreign cursor", tool: "notion_query_database", args: `{"database_id": "` + id + `", "cursor": "e6c6f5ff"}`, wantField: "cursor"},
		{name: "unknown argument", tool: "notion_search", args: `{"page_size": 5}`, wantField: "page_size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := providertest.NewUpstream(t, answer(http.StatusOK, nil, []byte(`{}`)))
			_, err := providertest.Invoke(t, tools(t)[tc.tool], newCall(t, up.URL), tc.args)
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

func itoa(n int) string { return strconv.Itoa(n) }
