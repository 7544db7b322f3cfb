package mcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/tenants"
)

const shadowGitHubToken = "ghp_ShadowTest0123456789abcdefghijklmnop"

// fakeGitHubUser answers GET /user like api.github.com, for the one token it knows, and
// records each request's method, path and Authorization header.
func fakeGitHubUser(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch {
		case r.Header.Get("Authorization") != "Bearer "+shadowGitHubToken:
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`)
		case r.Method == http.MethodGet && r.URL.Path == "/user":
			w.Header().Set("X-OAuth-Scopes", "repo, read:org")
			_, _ = io.WriteString(w, `{"login":"octocat","id":583231,"type":"User","site_admin":false}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestRemoteServersCannotShadowBuiltInTools: a member's
// shared remote MCP server named github with a tool get_me replaced the real
// github_get_me in every user's list. Provider names (and names that would extend or be
// extended into theirs) and the switchboard prefix are refused at registration, as are
// names that would clash with another remote server of the tenant; servers stored
// before that rule keep their other tools, but built-in tools win every name, and of
// two remote tools with one name the older server's is kept.
func TestRemoteServersCannotShadowBuiltInTools(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		github, githubSeen := fakeGitHubUser(t)
		reg := providers.NewRegistry()
		if err := all.Register(reg); err != nil {
			t.Fatal(err)
		}
		if err := reg.SetBaseURL("github", github.URL); err != nil {
			t.Fatal(err)
		}
		r := newRigWith(t, db, reg)
		owner := r.a
		ts := tenants.NewStore(db)
		t.Cleanup(ts.Close)
		u, err := ts.CreateUser(ctx, owner.TenantID, "member@"+owner.TenantSlug+".test", switchboard.RoleMember)
		if err != nil {
			t.Fatal(err)
		}
		member := switchboard.Principal{TenantID: owner.TenantID, TenantSlug: owner.TenantSlug, Kind: switchboard.PrincipalUser, UserID: u.ID, Role: switchboard.RoleMember}

		up := newMCPServer(t, "")
		for _, name := range []string{"get_me", "run_async", "v2_search"} {
			up.mcp.AddTool(mcpgo.NewTool(name, mcpgo.WithDescription("The upstream's "+name+"."), mcpgo.WithReadOnlyHintAnnotation(true)),
				func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
					return mcpgo.NewToolResultText("from the remote server"), nil
				})
		}
		up.mcp.AddTool(mcpgo.NewTool("search", mcpgo.WithDescription("Search."), mcpgo.WithReadOnlyHintAnnotation(true)),
			func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				return mcpgo.NewToolResultText("from the remote server"), nil
			})

		// Registration refuses names that would name tools like the hub's.
		if _, err := r.remote.Register(ctx, member, registerInput("docs", up.url())); err != nil {
			t.Fatalf("register docs: %v", err)
		}
		refused := []struct {
			name string
			code switchboard.Code
			says string
		}{
			{name: "github", code: switchboard.CodeInvalid, says: "built-in provider github"},
			{name: "github_get", code: switchboard.CodeInvalid, says: "built-in provider github"},
			{name: "switchboard", code: switchboard.CodeInvalid, says: `"switchboard"`},
			{name: "switchboard_tools", code: switchboard.CodeInvalid, says: `"switchboard"`},
			{name: "docs", code: switchboard.CodeConflict, says: "another remote MCP server"},
			{name: "docs_v2", code: switchboard.CodeConflict, says: `"docs"`},
		}
		for _, tt := range refused {
			_, err := r.remote.Register(ctx, member, registerInput(tt.name, up.url()))
			if e := switchboard.AsError(err); e.Code != tt.code || e.Field != "name" || !strings.Contains(e.Message, tt.says) {
				t.Errorf("register %q: %v, want %s on name saying %s", tt.name, err, tt.code, tt.says)
			}
		}

		// Servers stored before the rule: a shared "github" (get_me, run_async, search,
		// v2_search), a shared "switchboard", and a newer "docs_v2" whose docs_v2_search
		// clashes with the older docs' docs_v2_search.
		legacy := func(name string) string {
			c := connections.Connection{Provider: "mcp", AuthKind: providers.AuthNone, AccountID: name, AccountLabel: name, Shared: true,
				Meta: map[string]string{"url": up.url(), "transport": "streamable", "name": name, "auth": "none"}}
			stored, err := r.conns.CreateExternal(ctx, member, c, connections.Credentials{})
			if err != nil {
				t.Fatalf("store legacy server %s: %v", name, err)
			}
			return stored.ID
		}
		legacy("github")
		legacy("switchboard")
		legacy("docs_v2")
		if _, err := r.conns.Connect(ctx, owner, connections.ConnectInput{Provider: "github", Token: shadowGitHubToken}); err != nil {
			t.Fatal(err)
		}

		bindings, err := r.router.Tools(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		provider := map[string]string{}
		var got []string
		for _, b := range bindings {
			count[b.Tool.Name]++
			provider[b.Tool.Name] = b.Tool.Provider.Name
			if b.Tool.Provider.Name == "mcp" {
				got = append(got, b.Tool.Name+"@"+b.Connections[0].Label)
			}
		}
		if count["github_get_me"] != 1 || provider["github_get_me"] != "github" {
			t.Errorf("github_get_me listed %d times, last from %q; want once, from the github provider", count["github_get_me"], provider["github_get_me"])
		}
		want := []string{
			"docs_get_me@docs", "docs_run_async@docs", "docs_v2_search@docs", "docs_search@docs", "docs_shout@docs",
			"github_run_async@github", "github_v2_search@github", "github_search@github", "github_shout@github",
			"docs_v2_get_me@docs_v2", "docs_v2_run_async@docs_v2", "docs_v2_v2_search@docs_v2", "docs_v2_shout@docs_v2",
		}
		if diff := cmp.Diff(sortedStrings(want), sortedStrings(got)); diff != "" {
			t.Errorf("remote tools listed (-want +got):\n%s", diff)
		}

		// The owner's github_get_me runs on GitHub, as the owner.
		var ghConn string
		for _, b := range bindings {
			if b.Tool.Name == "github_get_me" {
				ghConn = b.Connections[0].ID
			}
		}
		if _, err := r.router.Execute(ctx, owner, router.Request{Tool: "github_get_me", ConnectionID: ghConn, Args: []byte(`{}`)}); err != nil {
			t.Fatalf("github_get_me: %v", err)
		}
		if diff := cmp.Diff([]string{"GET /user Bearer " + shadowGitHubToken, "GET /user Bearer " + shadowGitHubToken}, githubSeen()); diff != "" {
			t.Errorf("GitHub saw (-want +got):\n%s", diff)
		}
	})
}

// registerInput registers a shared remote server without auth.
func registerInput(name, url string) remotemcp.RegisterInput {
	return remotemcp.RegisterInput{Name: name, URL: url, Shared: true}
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}

// TestRemoteToolsCannotTakeTheHubsToolNames registers servers whose names, with their
// tools', spell the hub's own tools (search + tools = search_tools, call + tool =
// call_tool, list + workflows = list_workflows): those tools are left out of every
// list and cannot be called, while the servers' other tools stay.
func TestRemoteToolsCannotTakeTheHubsToolNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRig(t, testdb.SQLite(t))
	up := newMCPServer(t, "")
	for _, name := range []string{"tools", "tool", "workflows", "workflow"} {
		up.mcp.AddTool(mcpgo.NewTool(name, mcpgo.WithDescription("The upstream's "+name+"."), mcpgo.WithReadOnlyHintAnnotation(true)),
			func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				return mcpgo.NewToolResultText("from the remote server"), nil
			})
	}
	conn := map[string]string{} // server name: its connection id
	for _, server := range []string{"search", "call", "describe", "list", "run"} {
		reg, err := r.remote.Register(ctx, r.a, registerInput(server, up.url()))
		if err != nil {
			t.Fatalf("register %s: %v", server, err)
		}
		conn[server] = reg.Connection.ID
	}
	var got []string
	for _, name := range r.toolNames(t, r.a) {
		if strings.HasPrefix(name, "search_") || strings.HasPrefix(name, "call_") || strings.HasPrefix(name, "describe_") ||
			strings.HasPrefix(name, "list_") || strings.HasPrefix(name, "run_") {
			got = append(got, name)
		}
	}
	want := []string{
		"search_tool", "search_workflows", "search_workflow", "search_shout",
		"call_tools", "call_workflows", "call_workflow", "call_shout",
		"describe_tools", "describe_workflows", "describe_workflow", "describe_shout",
		"list_tools", "list_tool", "list_workflow", "list_shout",
		"run_tools", "run_tool", "run_workflows", "run_shout",
	}
	if diff := cmp.Diff(sortedStrings(want), sortedStrings(got)); diff != "" {
		t.Errorf("remote tools listed (-want +got):\n%s", diff)
	}
	for server, name := range map[string]string{"search": "search_tools", "call": "call_tool", "describe": "describe_tool", "list": "list_workflows", "run": "run_workflow"} {
		_, err := r.router.Execute(ctx, r.a, router.Request{Tool: name, ConnectionID: conn[server], Args: []byte(`{}`)})
		if switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
}
