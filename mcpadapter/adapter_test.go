package mcpadapter

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hub"
	"github.com/switchboard-hub/switchboard/router"
)

// keys maps API keys to principals, as the tenants store would.
type keys map[string]switchboard.Principal

func (k keys) Authenticate(_ context.Context, key string) (switchboard.Principal, error) {
	p, ok := k[key]
	if !ok {
		return switchboard.Principal{}, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "invalid API key"}
	}
	return p, nil
}

// memConns is an in-memory connection source with the store's tenancy rules.
type memConns struct {
	mu    sync.Mutex
	conns []connections.Connection
}

func (m *memConns) set(cs ...connections.Connection) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.conns = cs
}

func (m *memConns) Usable(_ context.Context, p switchboard.Principal) ([]connections.Connection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []connections.Connection
	for _, c := range m.conns {
		if c.UsableBy(p) && (c.Status == connections.StatusActive || c.Status == connections.StatusNeedsReconnect) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (m *memConns) MarkNeedsReconnect(_ context.Context, p switchboard.Principal, id string, _ int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, c := range m.conns {
		if c.ID == id && c.TenantID == p.TenantID {
			m.conns[i].Status = connections.StatusNeedsReconnect
		}
	}
	return nil
}

func (m *memConns) Open(_ context.Context, tenant switchboard.TenantID, id string) (connections.Connection, connections.Credentials, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.conns {
		if c.ID == id && c.TenantID == tenant {
			return c, connections.Credentials{AccessToken: "tok-" + c.ID}, nil
		}
	}
	return connections.Connection{}, connections.Credentials{}, switchboard.NotFound("connection")
}

type noteIn struct {
	Text string `json:"text" jsonschema:"The note"`
}

type noteOut struct {
	ID   int    `json:"id" jsonschema:"The note's number"`
	Text string `json:"text" jsonschema:"The note as stored"`
	By   string `json:"by" jsonschema:"The token that stored it"`
	// Tags is nil in every answer, which the hub must send as [] (its schema says array).
	Tags []string `json:"tags" jsonschema:"The note's tags"`
}

// notesSpec is a provider whose create_note posts to its upstream.
func notesSpec() providers.Spec {
	create := &providers.Operation[noteIn, noteOut]{
		Name: "create_note", Title: "Create note", Description: "Create a note.",
		Hints: providers.Hints{Destructive: false},
		Run: func(ctx context.Context, c *providers.Call, in noteIn) (noteOut, error) {
			body, _ := json.Marshal(in)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.URL("/notes"), strings.NewReader(string(body)))
			resp, err := c.HTTP.Do(req)
			if err != nil {
				return noteOut{}, err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				return noteOut{}, providers.StatusError("notes", resp, "", "")
			}
			var out noteOut
			return out, json.NewDecoder(resp.Body).Decode(&out)
		},
	}
	list := &providers.Operation[struct{}, noteOut]{
		Name: "last_note", Title: "Last note", Description: "Read the last note.",
		Hints: providers.Hints{ReadOnly: true},
		Run: func(context.Context, *providers.Call, struct{}) (noteOut, error) {
			return noteOut{}, nil
		},
	}
	return providers.Spec{Name: "notes", Title: "Notes", Verify: func(context.Context, *providers.Call) (providers.Account, error) { return providers.Account{}, nil }, Operations: []providers.Op{create, list}}
}

type env struct {
	srv     *httptest.Server
	conns   *memConns
	agents  *memAgents
	adapter *Adapter
	seen    chan *http.Request

	hookMu sync.Mutex
	hook   func(r *http.Request) bool // answers a request itself when it returns true
}

// onUpstream installs a hook that sees each upstream request first.
func (e *env) onUpstream(fn func(r *http.Request) bool) {
	e.hookMu.Lock()
	defer e.hookMu.Unlock()
	e.hook = fn
}

var (
	alice = switchboard.Principal{TenantID: "ten_a", TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: "usr_alice", KeyID: "key_a"}
	bob   = switchboard.Principal{TenantID: "ten_b", TenantSlug: "beta", Kind: switchboard.PrincipalUser, UserID: "usr_bob", KeyID: "key_b"}
)

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, nil)
}

// newEnvWith is newEnv with the adapter's options changed by opt (and the router's by
// ropts).
func newEnvWith(t *testing.T, opt func(*Options), ropts ...func(*router.Options)) *env {
	t.Helper()
	e := &env{conns: &memConns{}, agents: newMemAgents(), seen: make(chan *http.Request, 16)}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.hookMu.Lock()
		hook := e.hook
		e.hookMu.Unlock()
		if hook != nil && hook(r) {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		e.seen <- r.Clone(context.Background())
		var in noteIn
		_ = json.NewDecoder(r.Body).Decode(&in)
		if in.Text == "boom" {
			w.Header().Set("Retry-After", "9")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(noteOut{ID: 7, Text: in.Text, By: r.Header.Get("Authorization")})
	}))
	t.Cleanup(upstream.Close)
	reg := providers.NewRegistry()
	if err := reg.Register(notesSpec()); err != nil {
		t.Fatal(err)
	}
	_ = reg.SetBaseURL("notes", upstream.URL)
	e.conns.set(
		connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "alice@notes", Status: connections.StatusActive},
		connections.Connection{ID: "con_b", TenantID: "ten_b", OwnerUserID: "usr_bob", Provider: "notes", AccountLabel: "bob@notes", Status: connections.StatusActive},
	)
	ro := router.Options{Registry: reg, Connections: e.conns, Agents: e.agents}
	for _, f := range ropts {
		f(&ro)
	}
	rtr := router.New(ro)
	if err := reg.Register(hub.SearchSpec(rtr)); err != nil {
		t.Fatal(err)
	}
	o := Options{Router: rtr, Auth: keys{"key-alice": alice, "key-bob": bob, "key-triage": triage, "key-bob-agent": bobAgent}, Agents: e.agents,
		PublicURL: "https://hub.test", AllowedOrigins: []string{"https://app.example.com"}}
	if opt != nil {
		opt(&o)
	}
	e.adapter = New(o)
	t.Cleanup(func() { e.adapter.Close(context.Background()) })
	e.srv = httptest.NewServer(e.adapter)
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) client(t *testing.T, slug, key string) (*client.Client, error) {
	t.Helper()
	return e.clientAt(t, "/mcp/"+slug, key)
}

// clientAt is client for any path (an agent URL).
func (e *env) clientAt(t *testing.T, path, key string) (*client.Client, error) {
	t.Helper()
	c, err := client.NewStreamableHttpClient(e.srv.URL+path, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}),
		transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The listening GET stream lives as long as the context Start gets.
	if err := c.Start(context.Background()); err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		_ = c.Close()
		return nil, err
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, nil
}

func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func call(t *testing.T, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestListAndCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"notes_create_note", "notes_last_note"}, toolNames(t, c)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	res, _ := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	for _, tool := range res.Tools {
		if tool.Annotations.ReadOnlyHint == nil || tool.Annotations.DestructiveHint == nil || tool.Annotations.IdempotentHint == nil || tool.Annotations.OpenWorldHint == nil {
			t.Errorf("%s: every annotation must be set, got %+v", tool.Name, tool.Annotations)
		}
		if tool.Name == "notes_last_note" && !*tool.Annotations.ReadOnlyHint {
			t.Errorf("notes_last_note is read-only")
		}
		if len(tool.RawOutputSchema) == 0 && tool.OutputSchema.Type == "" {
			t.Errorf("%s has no output schema", tool.Name)
		}
	}

	got := call(t, c, "notes_create_note", map[string]any{"text": "hi"})
	if got.IsError {
		t.Fatalf("call failed: %s", text(got))
	}
	want := map[string]any{"id": 7.0, "text": "hi", "by": "Bearer tok-con_a", "tags": []any{}}
	var structured map[string]any
	raw, _ := json.Marshal(got.StructuredContent)
	_ = json.Unmarshal(raw, &structured)
	if diff := cmp.Diff(want, structured); diff != "" {
		t.Errorf("structuredContent (-want +got):\n%s", diff)
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text(got)), &fromText); err != nil || !cmp.Equal(want, fromText) {
		t.Errorf("text content = %q, want the same JSON as structuredContent", text(got))
	}
	if r := testwait.Recv(t, e.seen, "the upstream to receive the call"); r.Method != http.MethodPost || r.URL.Path != "/notes" {
		t.Errorf("upstream got %s %s", r.Method, r.URL.Path)
	}
}

func TestToolErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args any
		want []string
	}{
		{name: "missing argument names the field", args: map[string]any{}, want: []string{`"text"`, "is required"}},
		{name: "wrong type names the field", args: map[string]any{"text": 5}, want: []string{`"text"`, "must be string"}},
		{name: "unknown argument", args: map[string]any{"text": "x", "txt": "y"}, want: []string{`"txt"`, "not a known argument"}},
		{name: "rate limit says when to retry", args: map[string]any{"text": "boom"}, want: []string{"Rate limited", "retry after 9 s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, "notes_create_note", tt.args)
			if !res.IsError {
				t.Fatalf("isError not set; result %s", text(res))
			}
			for _, w := range tt.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("message %q does not contain %q", text(res), w)
				}
			}
		})
	}
}

func TestTenancy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name       string
		slug, key  string
		wantStatus int
	}{
		{name: "no key", slug: "acme", key: "", wantStatus: http.StatusUnauthorized},
		{name: "unknown key", slug: "acme", key: "sbk_nope", wantStatus: http.StatusUnauthorized},
		{name: "other tenant's key", slug: "acme", key: "key-bob", wantStatus: http.StatusForbidden},
		{name: "key on a tenant that does not exist", slug: "nosuch", key: "key-bob", wantStatus: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
			req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp/"+tt.slug, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.key != "" {
				req.Header.Set("Authorization", "Bearer "+tt.key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
		})
	}

	// Bob on his own URL sees only his tools, and calling runs on his connection.
	c, err := e.client(t, "beta", "key-bob")
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, c, "notes_create_note", map[string]any{"text": "mine"})
	if res.IsError || !strings.Contains(text(res), "tok-con_b") {
		t.Errorf("bob's call = %s, want it to run on con_b", text(res))
	}
	// A connection argument naming Alice's account is not accepted on Bob's tools.
	res = call(t, c, "notes_create_note", map[string]any{"text": "x", "connection": "alice@notes"})
	if !res.IsError {
		t.Errorf("bob passing alice's connection label succeeded: %s", text(res))
	}
}

func TestSeveralConnectionsTakeAConnectionArgument(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.conns.set(
		connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "work", Status: connections.StatusActive},
		connections.Connection{ID: "con_a2", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "home", Status: connections.StatusActive},
	)
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	for _, tool := range res.Tools {
		if tool.Name == "notes_create_note" {
			raw, _ := json.Marshal(tool.InputSchema)
			if len(tool.RawInputSchema) > 0 {
				raw = tool.RawInputSchema
			}
			_ = json.Unmarshal(raw, &schema)
		}
	}
	conn := schema["properties"].(map[string]any)["connection"].(map[string]any)
	if diff := cmp.Diff([]any{"work", "home"}, conn["enum"]); diff != "" {
		t.Errorf("connection enum (-want +got):\n%s", diff)
	}
	if !slices.Contains(schema["required"].([]any), any("connection")) {
		t.Errorf("connection is not required: %v", schema["required"])
	}
	got := call(t, c, "notes_create_note", map[string]any{"text": "x", "connection": "home"})
	if got.IsError || !strings.Contains(text(got), "tok-con_a2") {
		t.Errorf("call on home = %s, want it to run on con_a2", text(got))
	}
	missing := call(t, c, "notes_create_note", map[string]any{"text": "x"})
	if !missing.IsError || !strings.Contains(text(missing), `"connection"`) {
		t.Errorf("call without connection = %s, want an error naming connection", text(missing))
	}
}

func TestConnectionChangeRefreshesTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.conns.set()
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	if names := toolNames(t, c); len(names) != 0 {
		t.Fatalf("tools before any connection = %v", names)
	}
	e.conns.set(connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "alice@notes", Status: connections.StatusActive})
	e.adapter.ConnectionChanged("ten_a", "con_a")
	deadline := time.After(30 * time.Second)
	for len(toolNames(t, c)) != 2 {
		select {
		case <-deadline:
			t.Fatalf("tools after the connection was added = %v", toolNames(t, c))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestGetStreamNeedsASession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/mcp/acme", nil)
	req.Header.Set("Authorization", "Bearer key-alice")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET without a session = %d, want 400", resp.StatusCode)
	}
}

func TestSweepSparesScopesInUse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s, err := e.adapter.scope(context.Background(), alice, "")
	if err != nil {
		t.Fatal(err)
	}
	// Taken in use but not yet serving: a sweep far in the future must not drop it.
	e.adapter.Sweep(time.Now().Add(24 * time.Hour))
	e.adapter.mu.Lock()
	_, kept := e.adapter.scopes[scopeKey(alice, "")]
	e.adapter.mu.Unlock()
	if !kept {
		t.Fatal("a scope in use was swept")
	}
	s.done()
	e.adapter.Sweep(time.Now().Add(24 * time.Hour))
	e.adapter.mu.Lock()
	_, kept = e.adapter.scopes[scopeKey(alice, "")]
	e.adapter.mu.Unlock()
	if kept {
		t.Error("an idle scope was not swept")
	}
}

// TestGapRefreshesEveryScope: a change with no tenant (the change feed's gap: anything
// may have changed) rebuilds the tool lists of every live scope.
func TestGapRefreshesEveryScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.conns.set()
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	if names := toolNames(t, c); len(names) != 0 {
		t.Fatalf("tools before any connection = %v", names)
	}
	e.conns.set(connections.Connection{ID: "con_a", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "notes", AccountLabel: "alice@notes", Status: connections.StatusActive})
	e.adapter.ConnectionChanged("", "")
	deadline := time.After(30 * time.Second)
	for len(toolNames(t, c)) != 2 {
		select {
		case <-deadline:
			t.Fatalf("tools after the gap = %v", toolNames(t, c))
		case <-time.After(20 * time.Millisecond):
		}
	}
}
