package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// fakeGitHub answers GET /user as GitHub does, for the token check of a new connection
// and the get_me tool, and records the token of every request.
type fakeGitHub struct {
	*httptest.Server
	mu     sync.Mutex
	tokens []string
}

func newFakeGitHub(t testing.TB) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.tokens = append(f.tokens, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		f.mu.Unlock()
		if r.Method != http.MethodGet || r.URL.Path != "/user" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-OAuth-Scopes", "repo, read:org")
		_, _ = io.WriteString(w, `{"login":"octocat","id":583231,"name":"The Octocat","type":"User"}`)
	}))
	t.Cleanup(f.Close)
	return f
}

// uses counts the requests that carried token.
func (f *fakeGitHub) uses(token string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, tok := range f.tokens {
		if tok == token {
			n++
		}
	}
	return n
}

// node is one `switchboard serve` of a fleet.
type node struct {
	base string
}

// startFleetNode starts serve on the shared database and key file and returns its
// address and printed lines.
func startFleetNode(t testing.TB, dsn, keyFile, githubURL string, lines int) (node, []string) {
	t.Helper()
	e := env(map[string]string{
		"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": filepath.Join(t.TempDir(), "data"),
		"SWITCHBOARD_DATABASE_URL": dsn, "SWITCHBOARD_KEY_FILE": keyFile, "SWITCHBOARD_GITHUB_BASE_URL": githubURL,
		"SWITCHBOARD_LOG_LEVEL": "error",
	})
	out, _ := startServe(t, e, lines)
	m := regexp.MustCompile(`^Switchboard is listening on (http://127\.0\.0\.1:\d+)$`).FindStringSubmatch(out[0])
	if m == nil {
		t.Fatalf("first line %q", out[0])
	}
	return node{base: m[1]}, out
}

// api sends a REST request to the node and decodes the answer into out (when not nil).
func (n node) api(t testing.TB, method, path, key, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, n.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
	return res.StatusCode
}

// session opens an MCP session on the node and returns it with a channel that
// receives every notifications/tools/list_changed.
func (n node) session(t testing.TB, key string) (*client.Client, <-chan struct{}) {
	t.Helper()
	c, err := client.NewStreamableHttpClient(n.base+"/mcp/default",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}), transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 16)
	c.OnNotification(func(m mcp.JSONRPCNotification) {
		if m.Method == string(mcp.MethodNotificationToolsListChanged) {
			changed <- struct{}{}
		}
	})
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "fleet-test", Version: "1"}
	if _, err := c.Initialize(bounded(t), init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c, changed
}

// waitChanged waits for list_changed; the deadline only ends a test that would hang.
func waitChanged(t testing.TB, changed <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatalf("node B's session got no tools/list_changed after %s on node A", what)
	}
}

func sessionTools(t testing.TB, c *client.Client) []string {
	t.Helper()
	res, err := c.ListTools(bounded(t), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// TestFleetSharesChanges runs two full `serve` nodes on one PostgreSQL database and key
// file: what is changed through node A (a connection added or deleted, a key revoked,
// a user demoted or removed) is seen by node B, whose live session is told, without
// waiting for a cache to expire.
func TestFleetSharesChanges(t *testing.T) {
	t.Parallel()
	testdb.Postgres(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		gh := newFakeGitHub(t)
		dsn, keyFile := testdb.DSN(t, db), filepath.Join(t.TempDir(), "master.key")
		a, out := startFleetNode(t, dsn, keyFile, gh.URL, 5)
		var admin string
		for _, line := range out {
			if k, ok := strings.CutPrefix(line, "Admin API key (shown once, store it now): "); ok {
				admin = k
			}
		}
		if admin == "" {
			t.Fatalf("node A printed no admin key: %q", out)
		}
		b, _ := startFleetNode(t, dsn, keyFile, gh.URL, 5)

		sessB, changedB := b.session(t, admin)
		if slices.Contains(sessionTools(t, sessB), "github_get_me") {
			t.Fatal("node B lists GitHub tools before any connection")
		}

		// A connection added on A: B's session is told and B lists and runs its tools.
		var conn struct {
			ID string `json:"id"`
		}
		if code := a.api(t, http.MethodPost, "/api/connections", admin, `{"provider":"github","token":"ghp_first"}`, &conn); code != http.StatusCreated {
			t.Fatalf("connect on A: status %d", code)
		}
		waitChanged(t, changedB, "the connection was added")
		if !slices.Contains(sessionTools(t, sessB), "github_get_me") {
			t.Fatal("node B does not list github_get_me after the connection was added on A")
		}
		res, err := sessB.CallTool(bounded(t), callRequest("github_get_me"))
		if err != nil || res.IsError {
			t.Fatalf("github_get_me on B: %v %+v", err, res)
		}

		// The connection deleted on A: B refuses it and sends the upstream nothing more
		// with its token (B had a pooled client for it).
		if code := a.api(t, http.MethodDelete, "/api/connections/"+conn.ID, admin, "", nil); code != http.StatusOK && code != http.StatusNoContent {
			t.Fatalf("delete on A: status %d", code)
		}
		waitChanged(t, changedB, "the connection was deleted")
		before := gh.uses("ghp_first")
		res, err = sessB.CallTool(bounded(t), callRequest("github_get_me"))
		if err == nil && !res.IsError {
			t.Errorf("github_get_me on B after the deletion on A succeeded: %+v", res)
		}
		if after := gh.uses("ghp_first"); after != before {
			t.Errorf("node B sent the deleted connection's token upstream %d more times", after-before)
		}

		// A key revoked on A: B refuses it. B has it cached from a first use; a second
		// connection added on A after the revocation marks the point by which B has
		// heard of the revocation (A's events reach B in order).
		var key struct {
			ID  string `json:"id"`
			Key string `json:"key"`
		}
		if code := a.api(t, http.MethodPost, "/api/keys", admin, `{"name":"laptop"}`, &key); code != http.StatusCreated {
			t.Fatalf("create key on A: status %d", code)
		}
		if code := b.api(t, http.MethodGet, "/api/tenant", key.Key, "", nil); code != http.StatusOK {
			t.Fatalf("the new key on B: status %d", code)
		}
		if code := a.api(t, http.MethodDelete, "/api/keys/"+key.ID, admin, "", nil); code != http.StatusOK && code != http.StatusNoContent {
			t.Fatalf("revoke on A: status %d", code)
		}
		var second struct {
			ID string `json:"id"`
		}
		if code := a.api(t, http.MethodPost, "/api/connections", admin, `{"provider":"github","token":"ghp_second"}`, &second); code != http.StatusCreated {
			t.Fatalf("second connect on A: status %d", code)
		}
		waitChanged(t, changedB, "a connection was added after the key's revocation")
		if code := b.api(t, http.MethodGet, "/api/tenant", key.Key, "", nil); code != http.StatusUnauthorized {
			t.Errorf("the key revoked on A answers %d on B, want 401", code)
		}

		// A user demoted on A acts with the new role on B, and once removed on A is
		// refused on B. An empty POST /api/users tells the roles apart: an admin gets
		// 400 (no email), a member 403. Connection changes on A mark the points by which
		// B has heard.
		var grace struct {
			ID     string `json:"id"`
			APIKey struct {
				Key string `json:"key"`
			} `json:"api_key"`
		}
		if code := a.api(t, http.MethodPost, "/api/users", admin, `{"email":"grace@example.com","role":"admin"}`, &grace); code != http.StatusCreated {
			t.Fatalf("create user on A: status %d", code)
		}
		if code := b.api(t, http.MethodPost, "/api/users", grace.APIKey.Key, `{}`, nil); code != http.StatusBadRequest {
			t.Fatalf("the admin's key on B: status %d, want 400", code)
		}
		if code := a.api(t, http.MethodPatch, "/api/users/"+grace.ID, admin, `{"role":"member"}`, nil); code != http.StatusOK {
			t.Fatalf("demote on A: status %d", code)
		}
		if code := a.api(t, http.MethodDelete, "/api/connections/"+second.ID, admin, "", nil); code != http.StatusOK && code != http.StatusNoContent {
			t.Fatalf("delete the second connection on A: status %d", code)
		}
		waitChanged(t, changedB, "a connection was deleted after the demotion")
		if code := b.api(t, http.MethodPost, "/api/users", grace.APIKey.Key, `{}`, nil); code != http.StatusForbidden {
			t.Errorf("the user demoted on A answers %d on B, want 403 (a member)", code)
		}
		if code := a.api(t, http.MethodDelete, "/api/users/"+grace.ID, admin, "", nil); code != http.StatusOK && code != http.StatusNoContent {
			t.Fatalf("remove the user on A: status %d", code)
		}
		if code := a.api(t, http.MethodPost, "/api/connections", admin, `{"provider":"github","token":"ghp_third"}`, nil); code != http.StatusCreated {
			t.Fatalf("third connect on A: status %d", code)
		}
		waitChanged(t, changedB, "a connection was added after the user's removal")
		if code := b.api(t, http.MethodGet, "/api/tenant", grace.APIKey.Key, "", nil); code != http.StatusUnauthorized {
			t.Errorf("the key of the user removed on A answers %d on B, want 401", code)
		}
	})
}

// bounded is a context for one MCP request; its deadline only ends a test that would
// hang.
func bounded(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func callRequest(name string) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = map[string]any{}
	return req
}
