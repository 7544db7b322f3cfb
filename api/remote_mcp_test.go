package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestRemoteMCPAPI registers a remote MCP server over REST (POST /api/remote-mcp) and
// follows it through the existing endpoints: it is listed as a connection of provider
// mcp, its tools are listed and run by /api/tools, another tenant gets 404 for all of
// it, bad input is a 400 naming the field, and DELETE /api/connections/{id} removes it
// and its tools. No answer carries the bearer token.
func TestRemoteMCPAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	const token = "remote-bearer-0123456789"
	upstream := newShoutServer(t, token)

	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "k.json"))
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry()
	svc := connections.NewService(connections.NewStore(db, kr), reg, &providers.Transports{}, nil)
	guard, err := egress.NewGuard(true, nil)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := remotemcp.New(remotemcp.Options{Connections: svc, Guard: guard, Logger: slog.New(slog.DiscardHandler), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remote.Close)
	rtr := router.New(router.Options{Registry: reg, Connections: svc, Logger: slog.New(slog.DiscardHandler), ArgsKey: []byte("k")})
	svc.Subscribe(rtr.Forget)
	svc.Subscribe(remote.ConnectionChanged)
	srv := httptest.NewServer(api.New(api.Options{Registry: reg, Tenants: ts, Connections: svc, Tools: rtr, RemoteMCP: remote, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)

	keyOf := func(slug string) string {
		ten, err := ts.CreateTenant(ctx, slug, slug)
		if err != nil {
			t.Fatal(err)
		}
		u, err := ts.CreateUser(ctx, ten.ID, "o@"+slug+".test", switchboard.RoleOwner)
		if err != nil {
			t.Fatal(err)
		}
		key, _, err := ts.CreateKey(ctx, ten.ID, u.ID, "test", false)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	a, b := keyOf("remote-a"), keyOf("remote-b")
	do := keyedRequests(t, srv, token)

	status, body := do(a, "POST", "/api/remote-mcp", `{"name":"Up Server","url":"`+upstream.URL+`"}`)
	if status != http.StatusBadRequest || !strings.Contains(body, `"field":"name"`) {
		t.Fatalf("bad name = %d %s, want 400 on name", status, body)
	}
	status, body = do(a, "POST", "/api/remote-mcp", `{"name":"up","url":"`+upstream.URL+`","auth":"bearer","token":"`+token+`"}`)
	if status != http.StatusCreated {
		t.Fatalf("register = %d %s", status, body)
	}
	var created struct {
		Connection struct {
			ID       string `json:"id"`
			Provider string `json:"provider"`
			AuthKind string `json:"auth_kind"`
			Label    string `json:"account_label"`
		} `json:"connection"`
		Tools []string `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &created); err != nil {
		t.Fatal(err)
	}
	id := created.Connection.ID
	if diff := cmp.Diff([]string{"mcp", "api_key", "up", "up_shout"}, []string{created.Connection.Provider, created.Connection.AuthKind, created.Connection.Label, created.Tools[0]}); diff != "" {
		t.Errorf("registered (-want +got):\n%s", diff)
	}

	steps := []struct {
		name, key, method, path, body string
		status                        int
		contains                      string
	}{
		{name: "listed as a connection", key: a, method: "GET", path: "/api/connections", status: 200, contains: `"provider":"mcp"`},
		{name: "its tools", key: a, method: "GET", path: "/api/tools", status: 200, contains: `"tool":"up_shout"`},
		{name: "call", key: a, method: "POST", path: "/api/tools/up_shout/call", body: `{"arguments":{"word":"rest"}}`, status: 200, contains: `rest!`},
		{name: "call with a bad argument", key: a, method: "POST", path: "/api/tools/up_shout/call", body: `{"arguments":{"word":1}}`, status: 400, contains: `"field":"word"`},
		{name: "another tenant's connection", key: b, method: "GET", path: "/api/connections/" + id, status: 404},
		{name: "another tenant's tools", key: b, method: "GET", path: "/api/tools", status: 200, contains: `"tools":[]`},
		{name: "another tenant's call", key: b, method: "POST", path: "/api/tools/up_shout/call", body: `{"connection_id":"` + id + `","arguments":{"word":"x"}}`, status: 404},
		{name: "another tenant's delete", key: b, method: "DELETE", path: "/api/connections/" + id, status: 404},
		{name: "delete", key: a, method: "DELETE", path: "/api/connections/" + id, status: 204},
		{name: "no tools after delete", key: a, method: "GET", path: "/api/tools", status: 200, contains: `"tools":[]`},
	}
	for _, s := range steps {
		status, body := do(s.key, s.method, s.path, s.body)
		if status != s.status || !strings.Contains(body, s.contains) {
			t.Errorf("%s: %d %s, want %d containing %s", s.name, status, body, s.status, s.contains)
		}
	}
}

// newShoutServer is a remote MCP server (Streamable HTTP) with one read-only tool,
// shout, which answers its word with "!", to a request bearing token alone.
func newShoutServer(t *testing.T, token string) *httptest.Server {
	t.Helper()
	up := server.NewMCPServer("upstream", "1.0", server.WithToolCapabilities(true))
	up.AddTool(mcp.NewTool("shout", mcp.WithDescription("Shout a word back."), mcp.WithString("word", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			w, _ := req.GetArguments()["word"].(string)
			return mcp.NewToolResultText(w + "!"), nil
		})
	uh := server.NewStreamableHTTPServer(up)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		uh.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		upstream.CloseClientConnections()
		upstream.Close()
	})
	return upstream
}

// keyedRequests returns a function that sends a JSON request to srv with an API key and
// answers its status and body, failing the test when the body carries one of secrets.
func keyedRequests(t *testing.T, srv *httptest.Server, secrets ...string) func(key, method, path, body string) (int, string) {
	return func(key, method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		checkExchange(t, method, req.URL.Path, []byte(body), res, raw)
		for _, secret := range secrets {
			if strings.Contains(string(raw), secret) {
				t.Errorf("%s %s answered a credential: %s", method, path, raw)
			}
		}
		return res.StatusCode, string(raw)
	}
}
