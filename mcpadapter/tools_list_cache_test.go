package mcpadapter

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// answer is an HTTP answer as the client sees it.
type answer struct {
	Status      int
	ContentType string
	Body        string
}

// post sends one raw MCP POST at path as key in session and returns the answer.
func post(t *testing.T, e *env, path, key, session, body string) (answer, string) {
	t.Helper()
	return postWith(t, e, path, key, session, "application/json, text/event-stream", body)
}

// postWith sends one raw MCP POST with an Accept header and returns the answer and the
// Mcp-Session-Id it set. With text/event-stream in Accept a call of the session may be
// plain (answered by the adapter); without it the call goes to mcp-go.
func postWith(t *testing.T, e *env, path, key, session, accept, body string) (answer, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set("Authorization", "Bearer "+key)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}, resp.Header.Get("Mcp-Session-Id")
}

// openSession initializes a session at path as key and returns its id.
func openSession(t *testing.T, e *env, path, key string) string {
	t.Helper()
	a, id := post(t, e, path, key, "", initBody)
	if a.Status != http.StatusOK || id == "" {
		t.Fatalf("initialize at %s: %+v", path, a)
	}
	return id
}

// listPair asks for the tools twice in one session: once plainly (which the cache
// answers) and once with params that send it to mcp-go (a _meta the cache does not
// take), each with the same id.
func listPair(t *testing.T, e *env, path, key, session, id string) (cached, mcpgo answer) {
	t.Helper()
	cached, _ = post(t, e, path, key, session, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list","params":{}}`)
	mcpgo, _ = post(t, e, path, key, session, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list","params":{"_meta":{"probe":1}}}`)
	return cached, mcpgo
}

// scopeOf returns the live scope of p at the endpoint.
func scopeOf(t *testing.T, e *env, p switchboard.Principal, agentID string) *scope {
	t.Helper()
	e.adapter.mu.Lock()
	defer e.adapter.mu.Unlock()
	s, ok := e.adapter.scopes[scopeKey(p, agentID)]
	if !ok {
		t.Fatalf("no scope for %s at %q", p.ID(), agentID)
	}
	return s
}

func TestToolsListCacheAnswersAsMCPGo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Alice has two connections: her notes tools take a connection argument whose enum
	// lists her labels, so her list differs from Bob's and from her agent's.
	e.conns.set(
		connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "work", Status: connections.StatusActive},
		connections.Connection{ID: "con_a2", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "home <&>", Status: connections.StatusActive},
		connections.Connection{ID: "con_b", TenantID: "ten_b", OwnerUserID: "usr_bob", Provider: "notes", AccountLabel: "bob@notes", Status: connections.StatusActive},
	)
	tests := []struct {
		name, path, key string
		p               switchboard.Principal
		agent           string
		id              string
		want            []string // in the list
	}{
		{"alice, integer id", "/mcp/acme", "key-alice", alice, "", "7", []string{`"home \u003c\u0026\u003e"`, `"notes_create_note"`}},
		{"alice, string id", "/mcp/acme", "key-alice", alice, "", `"req-<1>"`, []string{`"notes_last_note"`}},
		{"bob, fractional id", "/mcp/beta", "key-bob", bob, "", "1.5", []string{`"notes_create_note"`}},
		{"bob, id beyond int64", "/mcp/beta", "key-bob", bob, "", "12345678901234567890", []string{`"notes_last_note"`}},
		{"agent", "/mcp/acme/agents/agt_triage", "key-triage", triage, "agt_triage", "3", []string{`"notes_create_note"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			session := openSession(t, e, tt.path, tt.key)
			cached, mcpgo := listPair(t, e, tt.path, tt.key, session, tt.id)
			if diff := cmp.Diff(mcpgo, cached); diff != "" {
				t.Errorf("cached answer differs from mcp-go's (-mcp-go +cached):\n%s", diff)
			}
			for _, w := range tt.want {
				if !strings.Contains(cached.Body, w) {
					t.Errorf("list lacks %s: %s", w, cached.Body)
				}
			}
			if scopeOf(t, e, tt.p, tt.agent).list.entry.Load() == nil {
				t.Error("the scope holds no encoded list: the cache did not answer")
			}
		})
	}
}

func TestToolsListCacheFollowsConnectionChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	old := openSession(t, e, "/mcp/acme", "key-alice")
	before, _ := listPair(t, e, "/mcp/acme", "key-alice", old, "1")
	if strings.Contains(before.Body, `"connection"`) {
		t.Fatalf("one connection, yet a connection argument: %s", before.Body)
	}
	e.conns.set(
		connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "work", Status: connections.StatusActive},
		connections.Connection{ID: "con_a2", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "home", Status: connections.StatusActive},
	)
	e.adapter.ConnectionChanged("ten_a", "con_a2")
	// The refresh runs in the background; it has landed once mcp-go lists the new schema.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, mcpgo := listPair(t, e, "/mcp/acme", "key-alice", openSession(t, e, "/mcp/acme", "key-alice"), "1")
		if strings.Contains(mcpgo.Body, `"home"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the refresh never landed: %s", mcpgo.Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fresh := openSession(t, e, "/mcp/acme", "key-alice")
	cached, mcpgo := listPair(t, e, "/mcp/acme", "key-alice", fresh, "2")
	if diff := cmp.Diff(mcpgo, cached); diff != "" {
		t.Errorf("after the change, cached answer differs from mcp-go's (-mcp-go +cached):\n%s", diff)
	}
	if !strings.Contains(cached.Body, `"enum":["work","home"]`) {
		t.Errorf("cached list after the change lacks the new connection enum: %s", cached.Body)
	}
	// The old session was told the list changed, so mcp-go answers it as an SSE stream
	// from now on; the cache leaves it to mcp-go, which still lists the new tools.
	got, _ := post(t, e, "/mcp/acme", "key-alice", old, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	if got.ContentType != "text/event-stream" || !strings.Contains(got.Body, `"home"`) {
		t.Errorf("old session's list = %+v, want mcp-go's SSE answer with the new list", got)
	}
}

func TestToolsListCacheLeavesOtherRequestsToMCPGo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	session := openSession(t, e, "/mcp/acme", "key-alice")
	tests := []struct {
		name, body string
	}{
		{"a cursor", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"bm90LWEtY3Vyc29y"}}`},
		{"a wrong JSON-RPC version", `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`},
		{"params that are not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scopeOf(t, e, alice, "")
			s.list.entry.Store(&listEntry{version: s.list.version.Load(), result: []byte(`{"tools":"from the cache"}`)})
			got, _ := post(t, e, "/mcp/acme", "key-alice", session, tt.body)
			if strings.Contains(got.Body, "from the cache") {
				t.Errorf("the cache answered %s: %+v", tt.name, got)
			}
		})
	}
}

// TestToolsListCacheFollowsSSEUpgrade: once mcp-go sent a session a notification, it
// answers every later request of the session as an SSE stream, and the cache leaves
// them to it: for a session whose notification left on its GET stream (the queue is
// empty again) as for one whose notification went with its next answer.
func TestToolsListCacheFollowsSSEUpgrade(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := openSession(t, e, "/mcp/acme", "key-alice")
	post(t, e, "/mcp/acme", "key-alice", id, `{"jsonrpc":"2.0","id":1,"method":"ping"}`) // the node takes the session up
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/mcp/acme", nil)
	req.Header.Set("Authorization", "Bearer key-alice")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	queued := openSession(t, e, "/mcp/acme", "key-alice") // no GET stream
	post(t, e, "/mcp/acme", "key-alice", queued, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if got, _ := post(t, e, "/mcp/acme", "key-alice", id, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); got.ContentType != "application/json" {
		t.Fatalf("before any notification, the list = %+v, want the cached JSON answer", got)
	}

	e.conns.set(
		connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "work", Status: connections.StatusActive},
		connections.Connection{ID: "con_a2", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "home", Status: connections.StatusActive},
	)
	e.adapter.ConnectionChanged("ten_a", "con_a2")
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() && !strings.Contains(lines.Text(), "notifications/tools/list_changed") {
	}
	if lines.Err() != nil {
		t.Fatalf("GET stream: %v", lines.Err())
	}
	for range 2 {
		got, _ := post(t, e, "/mcp/acme", "key-alice", id, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		if got.ContentType != "text/event-stream" || !strings.Contains(got.Body, `"home"`) {
			t.Errorf("list after the GET stream's notification = %+v, want mcp-go's SSE answer with the new list", got)
		}
	}
	for i := range 3 {
		got, _ := post(t, e, "/mcp/acme", "key-alice", queued, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
		if got.ContentType != "text/event-stream" {
			t.Errorf("list %d after the queued notification = %+v, want mcp-go's SSE answer", i, got)
		}
	}
}

func TestToolsListCacheNamesTheTracedSpan(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tel := telemetry.New(nil, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	e, url := tracedEnv(t, tel)
	traced := &env{srv: &httptest.Server{URL: url}}
	session := openSession(t, traced, "/mcp/acme", "key-alice")
	cached, mcpgo := listPair(t, traced, "/mcp/acme", "key-alice", session, "5")
	if diff := cmp.Diff(mcpgo, cached); diff != "" {
		t.Errorf("cached answer differs from mcp-go's (-mcp-go +cached):\n%s", diff)
	}
	if scopeOf(t, e, alice, "").list.entry.Load() == nil {
		t.Fatal("with tracing on, the cache did not answer")
	}
	// Both lists' HTTP spans say what they carried: mcp-go's through its hook, the
	// cached one through the cache.
	var named int
	for _, s := range rec.Ended() {
		if got := attrs(s, "mcp.method.name", "jsonrpc.request.id"); got["mcp.method.name"] == "tools/list" && got["jsonrpc.request.id"] == "5" {
			named++
		}
	}
	if named != 2 {
		t.Errorf("%d HTTP spans name tools/list with id 5, want 2 (the cached list's and mcp-go's)", named)
	}
}
