package mcpadapter

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testlog"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/sessions"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// carol is a second user of alice's tenant.
var carol = switchboard.Principal{TenantID: "ten_a", TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: "usr_carol", KeyID: "key_c"}

// aliceOtherKey is alice authenticated by another of her keys.
var aliceOtherKey = func() switchboard.Principal { p := alice; p.KeyID = "key_a2"; return p }()

// sessionEnv is an env whose adapter runs on clock, with the session store and limits given.
func sessionEnv(t *testing.T, clock *fakeClock, store mcptransport.SessionStore, limits sessions.Limits) *env {
	t.Helper()
	return newEnvWith(t, func(o *Options) {
		o.Auth = keys{"key-alice": alice, "key-alice-2": aliceOtherKey, "key-bob": bob, "key-carol": carol}
		o.Now = clock.Now
		o.Sessions = store
		o.SessionLimits = limits
	})
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`

// mcpRequest sends one raw MCP request and returns the status, the Mcp-Session-Id
// header and the body.
func mcpRequest(t *testing.T, base, method, path, key, session, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
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
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// initSession initializes a session as key and returns its id.
func initSession(t *testing.T, base, key string) string {
	t.Helper()
	status, id, body := mcpRequest(t, base, http.MethodPost, "/mcp/acme", key, "", initBody)
	if status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %q %s", status, id, body)
	}
	return id
}

const listBody = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

func TestSessionIDsAreIssuedAndChecked(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	store := sessions.NewMemory()
	e := sessionEnv(t, clock, store, sessions.Limits{})
	base := e.srv.URL

	ids := map[string]bool{}
	for range 3 {
		id := initSession(t, base, "key-alice")
		if !strings.HasPrefix(id, "mcs_") || len(id) < 4+32 || ids[id] {
			t.Errorf("session id %q: want a fresh id of at least 160 random bits", id)
		}
		ids[id] = true
	}
	live := initSession(t, base, "key-alice")
	rec, err := store.Get(context.Background(), "ten_a", live)
	if err != nil {
		t.Fatalf("the session was not recorded: %v", err)
	}
	if diff := cmp.Diff(sessions.Record{ID: live, TenantID: "ten_a", PrincipalID: alice.ID(), KeyID: alice.KeyID, ProtocolVersion: "2025-06-18",
		ClientInfo: json.RawMessage(`{"name":"t","version":"1"}`), Capabilities: json.RawMessage(`{"elicitation":{}}`), CreatedAt: clock.Now()}, rec); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	deleted := initSession(t, base, "key-alice")
	if status, _, body := mcpRequest(t, base, http.MethodDelete, "/mcp/acme", "key-alice", deleted, ""); status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", status, body)
	}

	tests := []struct {
		name       string
		method     string
		key        string
		session    string
		body       string
		wantStatus int
		wantBody   string
	}{
		{name: "a live session", method: http.MethodPost, key: "key-alice", session: live, body: listBody, wantStatus: http.StatusOK, wantBody: `"notes_create_note"`},
		{name: "a never-issued id", method: http.MethodPost, key: "key-alice", session: "mcs_" + switchboard.RandomToken(24), body: listBody, wantStatus: http.StatusNotFound, wantBody: `"code":-32001`},
		{name: "mcp-go's own id format", method: http.MethodPost, key: "key-alice", session: "mcp-session-0b5f0e47-8a7c-4cbe-9a0b-0d3f1d0c2b11", body: listBody, wantStatus: http.StatusNotFound, wantBody: `"code":-32001`},
		{name: "a deleted session", method: http.MethodPost, key: "key-alice", session: deleted, body: listBody, wantStatus: http.StatusNotFound, wantBody: `"id":2`},
		{name: "a GET stream of a deleted session", method: http.MethodGet, key: "key-alice", session: deleted, wantStatus: http.StatusNotFound, wantBody: `"code":-32001`},
		{name: "another user's session", method: http.MethodPost, key: "key-carol", session: live, body: listBody, wantStatus: http.StatusNotFound, wantBody: `"code":-32001`},
		{name: "another user deleting it", method: http.MethodDelete, key: "key-carol", session: live, wantStatus: http.StatusNotFound, wantBody: `"code":-32001`},
		{name: "the same user's other key", method: http.MethodPost, key: "key-alice-2", session: live, body: listBody, wantStatus: http.StatusNotFound, wantBody: `"code":-32001`},
		{name: "the same user's other key deleting it", method: http.MethodDelete, key: "key-alice-2", session: live, wantStatus: http.StatusNotFound, wantBody: `"code":-32001`},
		{name: "no session id", method: http.MethodPost, key: "key-alice", body: listBody, wantStatus: http.StatusBadRequest, wantBody: `"code":-32600`},
		{name: "DELETE without a session id", method: http.MethodDelete, key: "key-alice", wantStatus: http.StatusBadRequest, wantBody: `Mcp-Session-Id`},
		{name: "the live session still works for its owner", method: http.MethodPost, key: "key-alice", session: live, body: listBody, wantStatus: http.StatusOK, wantBody: `"notes_last_note"`},
	}
	for _, tt := range tests {
		status, _, body := mcpRequest(t, base, tt.method, "/mcp/acme", tt.key, tt.session, tt.body)
		if status != tt.wantStatus || !strings.Contains(body, tt.wantBody) {
			t.Errorf("%s: %d %s, want %d with %s", tt.name, status, body, tt.wantStatus, tt.wantBody)
		}
	}
	// Bob's tenant never sees alice's session either.
	if status, _, body := mcpRequest(t, base, http.MethodPost, "/mcp/beta", "key-bob", live, listBody); status != http.StatusNotFound {
		t.Errorf("another tenant's key with the id: %d %s, want 404", status, body)
	}
}

func TestRefusedInitializeMintsNoSession(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	store := sessions.NewMemory()
	e := sessionEnv(t, clock, store, sessions.Limits{})
	tests := []struct {
		name string
		body string
	}{
		{name: "bad jsonrpc version", body: `{"jsonrpc":"1.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`},
		{name: "a protocol version that is not a string", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`},
		{name: "params that are not an object", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":[1]}`},
		{name: "initialize as a notification", body: `{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`},
	}
	for _, tt := range tests {
		status, id, body := mcpRequest(t, e.srv.URL, http.MethodPost, "/mcp/acme", "key-alice", "", tt.body)
		if id != "" {
			t.Errorf("%s: got session id %q (status %d, %s), want none", tt.name, id, status, body)
		}
	}
	ended, _ := store.DeleteExpired(context.Background(), clock.Now().Add(time.Hour), sessions.DefaultLimits)
	if len(ended) != 0 {
		t.Errorf("refused initializes left %d session records", len(ended))
	}
	e.adapter.mu.Lock()
	defer e.adapter.mu.Unlock()
	for _, s := range e.adapter.scopes {
		if n := s.ep.LiveCount(); n != 0 {
			t.Errorf("refused initializes left %d sessions in the server", n)
		}
	}
}

func TestUnusedSessionsExpireSoon(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := sessionEnv(t, clock, sessions.NewMemory(), sessions.Limits{Unused: 2 * time.Minute, Idle: 30 * time.Minute})
	base := e.srv.URL
	abandoned := initSession(t, base, "key-alice")
	used := initSession(t, base, "key-alice")
	// notifications/initialized is part of initialize, not a use.
	for _, id := range []string{abandoned, used} {
		if status, _, body := mcpRequest(t, base, http.MethodPost, "/mcp/acme", "key-alice", id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
			t.Fatalf("initialized: %d %s", status, body)
		}
	}
	clock.Add(time.Minute)
	if status, _, body := mcpRequest(t, base, http.MethodPost, "/mcp/acme", "key-alice", used, listBody); status != http.StatusOK {
		t.Fatalf("use: %d %s", status, body)
	}
	clock.Add(90 * time.Second)
	if status, _, body := mcpRequest(t, base, http.MethodPost, "/mcp/acme", "key-alice", abandoned, listBody); status != http.StatusNotFound {
		t.Errorf("a session never used, 150 s after initialize: %d %s, want 404", status, body)
	}
	if status, _, body := mcpRequest(t, base, http.MethodPost, "/mcp/acme", "key-alice", used, listBody); status != http.StatusOK {
		t.Errorf("a used session 90 s after its use: %d %s, want 200", status, body)
	}
	clock.Add(31 * time.Minute)
	if status, _, body := mcpRequest(t, base, http.MethodPost, "/mcp/acme", "key-alice", used, listBody); status != http.StatusNotFound {
		t.Errorf("a used session idle for 31 min: %d %s, want 404", status, body)
	}
}

func TestSweepEndsExpiredSessionsAndFreesTheirState(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	store := sessions.NewMemory()
	e := sessionEnv(t, clock, store, sessions.Limits{Unused: 2 * time.Minute, Idle: 30 * time.Minute})
	held := func() int {
		e.adapter.mu.Lock()
		defer e.adapter.mu.Unlock()
		n := 0
		for _, s := range e.adapter.scopes {
			n += s.ep.LiveCount()
		}
		return n
	}
	var ids []string
	for range 5 {
		id := initSession(t, e.srv.URL, "key-alice")
		mcpRequest(t, e.srv.URL, http.MethodPost, "/mcp/acme", "key-alice", id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		ids = append(ids, id)
	}
	if n := held(); n != 0 {
		t.Fatalf("%d sessions held after 5 initializes and nothing else, want 0", n)
	}
	used, unused := ids[:3], ids[3:]
	for _, id := range used {
		if status, _, body := mcpRequest(t, e.srv.URL, http.MethodPost, "/mcp/acme", "key-alice", id, listBody); status != http.StatusOK {
			t.Fatalf("use: %d %s", status, body)
		}
	}
	if n := held(); n != 3 {
		t.Fatalf("%d sessions held after 3 were used, want 3", n)
	}
	clock.Add(3 * time.Minute)
	e.adapter.Sweep(clock.Now())
	if n := held(); n != 0 {
		t.Errorf("%d sessions held after the sweep, want 0", n)
	}
	for _, id := range unused {
		if _, err := store.Get(context.Background(), "ten_a", id); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Errorf("a session never used, after the sweep: %v, want its record gone", err)
		}
	}
	for _, id := range used {
		if status, _, body := mcpRequest(t, e.srv.URL, http.MethodPost, "/mcp/acme", "key-alice", id, listBody); status != http.StatusOK {
			t.Errorf("a used session after the sweep: %d %s, want it restored", status, body)
		}
	}
}

func TestSessionCapEvictsTheOldestIdle(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := sessionEnv(t, clock, sessions.NewMemory(), sessions.Limits{PerPrincipal: 2})
	base := e.srv.URL
	first := initSession(t, base, "key-alice")
	clock.Add(time.Second)
	second := initSession(t, base, "key-alice")
	clock.Add(time.Second)
	// Using the first makes the second the least recently used.
	if status, _, body := mcpRequest(t, base, http.MethodPost, "/mcp/acme", "key-alice", first, listBody); status != http.StatusOK {
		t.Fatalf("use: %d %s", status, body)
	}
	clock.Add(time.Second)
	carols := initSession(t, base, "key-carol") // another principal's sessions do not count
	third := initSession(t, base, "key-alice")
	want := map[string]int{first: http.StatusOK, second: http.StatusNotFound, third: http.StatusOK}
	got := map[string]int{}
	for id := range want {
		got[id], _, _ = mcpRequest(t, base, http.MethodPost, "/mcp/acme", "key-alice", id, listBody)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses after a third session over a cap of 2 (-want +got):\n%s", diff)
	}
	if status, _, _ := mcpRequest(t, base, http.MethodPost, "/mcp/acme", "key-carol", carols, listBody); status != http.StatusOK {
		t.Errorf("carol's session: %d, want 200", status)
	}
}

func TestSessionIDsStayOutOfLogs(t *testing.T) {
	t.Parallel()
	var logs testlog.Buffer
	e := newEnvWith(t, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	id := initSession(t, e.srv.URL, "key-alice")
	// An answer to nothing pending: mcp-go logs the failure, naming the session.
	status, _, _ := mcpRequest(t, e.srv.URL, http.MethodPost, "/mcp/acme", "key-alice", id, `{"jsonrpc":"2.0","id":99,"result":{"action":"accept"}}`)
	if status < 400 {
		t.Fatalf("an answer to nothing pending: %d", status)
	}
	if got := logs.String(); strings.Contains(got, id) || !strings.Contains(got, "mcs_[hidden]") {
		t.Errorf("logs %q: want the failure logged without the session id", got)
	}
}

func TestGapMakesANodeReadItsSessionsAgain(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	store := sessions.NewMemory()
	e := sessionEnv(t, clock, store, sessions.Limits{})
	id := initSession(t, e.srv.URL, "key-alice")
	if status, _, body := mcpRequest(t, e.srv.URL, http.MethodPost, "/mcp/acme", "key-alice", id, listBody); status != http.StatusOK {
		t.Fatalf("use: %d %s", status, body)
	}
	// Another node ended the session and its message was lost: this node still holds
	// its copy until the feed says messages may have been lost.
	if err := store.Delete(context.Background(), "ten_a", id); err != nil {
		t.Fatal(err)
	}
	e.adapter.relayed(mcptransport.RelayMessage{Kind: mcptransport.RelayGap})
	if status, _, body := mcpRequest(t, e.srv.URL, http.MethodPost, "/mcp/acme", "key-alice", id, listBody); status != http.StatusNotFound {
		t.Errorf("after a gap: %d %s, want 404", status, body)
	}
}

func TestANodeHoldsABoundedNumberOfSessions(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := newEnvWith(t, func(o *Options) {
		o.Now = clock.Now
		o.MaxHeldSessions = 10
	})
	var ids []string
	for range 12 {
		id := initSession(t, e.srv.URL, "key-alice")
		clock.Add(time.Second)
		if status, _, body := mcpRequest(t, e.srv.URL, http.MethodPost, "/mcp/acme", "key-alice", id, listBody); status != http.StatusOK {
			t.Fatalf("use: %d %s", status, body)
		}
		ids = append(ids, id)
	}
	if n := e.adapter.held.Load(); n > 10 {
		t.Errorf("the node holds %d sessions, over its bound of 10", n)
	}
	e.adapter.mu.Lock()
	var s *scope
	for _, sc := range e.adapter.scopes {
		s = sc
	}
	e.adapter.mu.Unlock()
	if s.ep.Holds(ids[0]) || !s.ep.Holds(ids[11]) {
		t.Errorf("holds the oldest %v, the newest %v; want the least recently used dropped first", s.ep.Holds(ids[0]), s.ep.Holds(ids[11]))
	}
	// A dropped session is restored from its record when used again.
	if status, _, body := mcpRequest(t, e.srv.URL, http.MethodPost, "/mcp/acme", "key-alice", ids[0], listBody); status != http.StatusOK {
		t.Errorf("the oldest session used again: %d %s, want 200", status, body)
	}
}

// countingStore counts the writes of a session's last use.
type countingStore struct {
	mcptransport.SessionStore
	mu      sync.Mutex
	touches int
}

func (c *countingStore) Touch(ctx context.Context, tenant switchboard.TenantID, id string, at time.Time) error {
	c.mu.Lock()
	c.touches++
	c.mu.Unlock()
	return c.SessionStore.Touch(ctx, tenant, id, at)
}

func (c *countingStore) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.touches
}

func TestSessionUseIsWrittenAtMostEvery30Seconds(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	store := &countingStore{SessionStore: sessions.NewMemory()}
	e := sessionEnv(t, clock, store, sessions.Limits{})
	id := initSession(t, e.srv.URL, "key-alice")
	steps := []struct {
		advance time.Duration
		calls   int
		want    int
	}{
		{calls: 1, want: 1},                            // the first use is written at once
		{advance: time.Second, calls: 20, want: 1},     // 20 more within 30 s write nothing
		{advance: 28 * time.Second, calls: 5, want: 1}, // 29 s after the first write: still none
		{advance: 2 * time.Second, calls: 5, want: 2},  // 31 s after it: one more write
	}
	for i, st := range steps {
		clock.Add(st.advance)
		for range st.calls {
			if status, _, body := mcpRequest(t, e.srv.URL, http.MethodPost, "/mcp/acme", "key-alice", id, listBody); status != http.StatusOK {
				t.Fatalf("step %d: %d %s", i, status, body)
			}
		}
		if got := store.count(); got != st.want {
			t.Errorf("step %d: %d writes of the last use, want %d", i, got, st.want)
		}
	}
}
