package router

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
)

// memConns is an in-memory connection source with the store's tenancy and status rules.
type memConns struct {
	mu     sync.Mutex
	conns  map[string]connections.Connection
	creds  map[string]connections.Credentials
	opens  atomic.Int32
	marked []string
	// openGate, when set, is waited on inside Open (to race a change against an open).
	openGate chan struct{}
}

func (m *memConns) add(c connections.Connection, token string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.conns[c.ID] = c
	m.creds[c.ID] = connections.Credentials{AccessToken: token}
}

func (m *memConns) Usable(_ context.Context, p switchboard.Principal) ([]connections.Connection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []connections.Connection
	for _, id := range []string{"con_a1", "con_a2", "con_a3", "con_b1"} {
		if c, ok := m.conns[id]; ok && c.UsableBy(p) && (c.Status == connections.StatusActive || c.Status == connections.StatusExpiring) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (m *memConns) Open(_ context.Context, tenant switchboard.TenantID, id string) (connections.Connection, connections.Credentials, error) {
	m.opens.Add(1)
	if m.openGate != nil {
		<-m.openGate
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.conns[id]
	if !ok || c.TenantID != tenant {
		return connections.Connection{}, connections.Credentials{}, switchboard.NotFound("connection")
	}
	return c, m.creds[id], nil
}

func (m *memConns) MarkNeedsReconnect(_ context.Context, p switchboard.Principal, id string, version int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.conns[id]
	if !ok || c.TenantID != p.TenantID || c.Version != version {
		return nil
	}
	c.Status = connections.StatusNeedsReconnect
	c.Version++
	m.conns[id] = c
	m.marked = append(m.marked, id)
	return nil
}

// memAudit keeps rows as the audit table does: a row of an id already held (a call's
// completion after its row in flight) replaces it; written holds every row as written.
type memAudit struct {
	full    bool
	mu      sync.Mutex
	events  []audit.Event
	written []audit.Event
}

func (m *memAudit) Record(e audit.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.written = append(m.written, e)
	for i := range m.events {
		if e.ID != "" && m.events[i].ID == e.ID {
			m.events[i] = e
			return
		}
	}
	m.events = append(m.events, e)
}

// row returns the row of id as it stands.
func (m *memAudit) row(id string) (audit.Event, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.events {
		if e.ID == id {
			return e, true
		}
	}
	return audit.Event{}, false
}

func (m *memAudit) Saturated() bool { return m.full }

func (m *memAudit) last(t *testing.T) audit.Event {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.events) == 0 {
		t.Fatal("no audit event recorded")
	}
	return m.events[len(m.events)-1]
}

type greetIn struct {
	Name string `json:"name" jsonschema:"Who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting" jsonschema:"The greeting the upstream made"`
}

// fakeProvider is a provider whose one operation asks its upstream for a greeting.
func fakeProvider(name string) providers.Spec {
	greet := &providers.Operation[greetIn, greetOut]{
		Name: "greet", Title: "Greet", Description: "Ask the upstream to greet someone.",
		Hints: providers.Hints{ReadOnly: true},
		Run: func(ctx context.Context, c *providers.Call, in greetIn) (greetOut, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL("/greet?name="+in.Name), nil)
			resp, err := c.HTTP.Do(req)
			if err != nil {
				return greetOut{}, err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return greetOut{}, providers.StatusError(name, resp, "", "")
			}
			var out greetOut
			return out, json.NewDecoder(resp.Body).Decode(&out)
		},
	}
	return providers.Spec{Name: name, Title: name, Verify: func(context.Context, *providers.Call) (providers.Account, error) { return providers.Account{}, nil }, Operations: []providers.Op{greet}}
}

type fixture struct {
	router   *Router
	conns    *memConns
	audit    *memAudit
	upstream *httptest.Server
	tokens   chan string
}

var (
	alice = switchboard.Principal{TenantID: "ten_a", TenantSlug: "a", Kind: switchboard.PrincipalUser, UserID: "usr_alice", KeyID: "key_1"}
	carol = switchboard.Principal{TenantID: "ten_a", TenantSlug: "a", Kind: switchboard.PrincipalUser, UserID: "usr_carol", KeyID: "key_3"}
	bob   = switchboard.Principal{TenantID: "ten_b", TenantSlug: "b", Kind: switchboard.PrincipalUser, UserID: "usr_bob", KeyID: "key_2"}
)

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{conns: &memConns{conns: map[string]connections.Connection{}, creds: map[string]connections.Credentials{}}, audit: &memAudit{}, tokens: make(chan string, 64)}
	f.upstream = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.tokens <- r.Header.Get("Authorization")
		switch r.URL.Query().Get("name") {
		case "gone":
			w.WriteHeader(http.StatusUnauthorized)
			return
		case "slow":
			w.Header().Set("Retry-After", "42")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_ = json.NewEncoder(w).Encode(greetOut{Greeting: "hello " + r.URL.Query().Get("name")})
	}))
	t.Cleanup(f.upstream.Close)
	reg := providers.NewRegistry()
	for _, n := range []string{"fake", "other"} {
		if err := reg.Register(fakeProvider(n)); err != nil {
			t.Fatal(err)
		}
		_ = reg.SetBaseURL(n, f.upstream.URL)
	}
	f.conns.add(connections.Connection{ID: "con_a1", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "fake", AccountLabel: "alice-fake", Status: connections.StatusActive}, "token-a1")
	f.conns.add(connections.Connection{ID: "con_a2", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "fake", AccountLabel: "team", Shared: true, Status: connections.StatusActive}, "token-a2")
	f.conns.add(connections.Connection{ID: "con_a3", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "other", AccountLabel: "dead", Status: connections.StatusNeedsReconnect}, "token-a3")
	f.conns.add(connections.Connection{ID: "con_b1", TenantID: "ten_b", OwnerUserID: "usr_bob", Provider: "fake", AccountLabel: "bob-fake", Status: connections.StatusActive}, "token-b1")
	f.router = New(Options{Registry: reg, Connections: f.conns, Audit: f.audit})
	return f
}

func TestExecute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		who       switchboard.Principal
		req       Request
		want      any
		wantCode  switchboard.Code
		wantField string
		wantToken string // the Authorization the upstream must have seen; "" means no request
	}{
		{name: "own private connection", who: alice, req: Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"ada"}`)}, want: greetOut{Greeting: "hello ada"}, wantToken: "Bearer token-a1"},
		{name: "shared connection of a colleague", who: carol, req: Request{Tool: "fake_greet", ConnectionID: "con_a2", Args: json.RawMessage(`{"name":"cy"}`)}, want: greetOut{Greeting: "hello cy"}, wantToken: "Bearer token-a2"},
		{name: "colleague's private connection is not found", who: carol, req: Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"x"}`)}, wantCode: switchboard.CodeNotFound},
		{name: "other tenant's connection is not found", who: bob, req: Request{Tool: "fake_greet", ConnectionID: "con_a2", Args: json.RawMessage(`{"name":"x"}`)}, wantCode: switchboard.CodeNotFound},
		{name: "unknown connection", who: alice, req: Request{Tool: "fake_greet", ConnectionID: "con_zz", Args: json.RawMessage(`{"name":"x"}`)}, wantCode: switchboard.CodeNotFound},
		{name: "arguments validated before anything else", who: bob, req: Request{Tool: "fake_greet", ConnectionID: "con_a2", Args: json.RawMessage(`{"nam":"x"}`)}, wantCode: switchboard.CodeInvalid, wantField: "nam"}, // also names the missing "name"
		{name: "unknown tool", who: alice, req: Request{Tool: "fake_nope", ConnectionID: "con_a1"}, wantCode: switchboard.CodeNotFound},
		{name: "connection of another provider", who: alice, req: Request{Tool: "other_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"x"}`)}, wantCode: switchboard.CodeInvalid, wantField: "connection"},
		{name: "connection needing reconnect", who: alice, req: Request{Tool: "other_greet", ConnectionID: "con_a3", Args: json.RawMessage(`{"name":"x"}`)}, wantCode: switchboard.CodeReconnect},
		{name: "upstream 401 asks to reconnect", who: alice, req: Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"gone"}`)}, wantCode: switchboard.CodeReconnect, wantToken: "Bearer token-a1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			out, err := f.router.Execute(context.Background(), tt.who, tt.req)
			if tt.wantCode != "" {
				if got := switchboard.CodeOf(err); got != tt.wantCode {
					t.Fatalf("error = %v (code %s), want code %s", err, got, tt.wantCode)
				}
				if e := switchboard.AsError(err); tt.wantField != "" && e.Field != tt.wantField {
					t.Errorf("field = %q, want %q", e.Field, tt.wantField)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out); tt.wantCode == "" && diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			select {
			case got := <-f.tokens:
				if got != tt.wantToken {
					t.Errorf("upstream saw Authorization %q, want %q", got, tt.wantToken)
				}
			default:
				if tt.wantToken != "" {
					t.Error("upstream received no request")
				}
			}
			ev := f.audit.last(t)
			wantOutcome := "ok"
			if tt.wantCode != "" {
				wantOutcome = string(tt.wantCode)
			}
			if ev.Outcome != wantOutcome || ev.Tool != tt.req.Tool || ev.TenantID != tt.who.TenantID || ev.Principal != tt.who.ID() || ev.Kind != audit.KindToolCall {
				t.Errorf("audit event = %+v", ev)
			}
			if len(ev.ArgsHash) != 64 {
				t.Errorf("audit args hash = %q, want a SHA-256 hex", ev.ArgsHash)
			}
		})
	}
}

func TestExecuteAuditsUpstreamStatusAndRetryAfter(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"slow"}`)})
	var ue *providers.UpstreamError
	if !asUpstream(err, &ue) || ue.Code != switchboard.CodeRateLimited || ue.RetryAfter.Seconds() != 42 {
		t.Fatalf("error = %v, want rate_limited with retry after 42 s", err)
	}
	if ev := f.audit.last(t); ev.UpstreamStatus != http.StatusTooManyRequests || ev.Outcome != "rate_limited" {
		t.Errorf("audit = %+v, want upstream 429 rate_limited", ev)
	}
	// The second call is refused by the connection's limiter without reaching the upstream.
	testwait.Recv(t, f.tokens, "the upstream to receive the call")
	_, err = f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"ada"}`)})
	if switchboard.CodeOf(err) != switchboard.CodeRateLimited {
		t.Errorf("call inside the upstream's window = %v, want rate_limited", err)
	}
	select {
	case <-f.tokens:
		t.Error("a call inside the upstream's Retry-After window reached the upstream")
	default:
	}
}

func asUpstream(err error, target **providers.UpstreamError) bool {
	for err != nil {
		if ue, ok := err.(*providers.UpstreamError); ok {
			*target = ue
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

func TestPoolCachesAndForgets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	call := func() {
		t.Helper()
		if _, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"a"}`)}); err != nil {
			t.Fatal(err)
		}
		testwait.Recv(t, f.tokens, "the upstream to receive the call")
	}
	call()
	call()
	if n := f.conns.opens.Load(); n != 1 {
		t.Errorf("credentials opened %d times for two calls, want 1 (cached)", n)
	}
	f.conns.add(connections.Connection{ID: "con_a1", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "fake", AccountLabel: "alice-fake", Status: connections.StatusActive}, "token-rotated")
	f.router.Forget("ten_a", "con_a1")
	if _, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"a"}`)}); err != nil {
		t.Fatal(err)
	}
	if got := testwait.Recv(t, f.tokens, "the upstream to receive the call"); got != "Bearer token-rotated" {
		t.Errorf("after Forget the upstream saw %q, want the new token", got)
	}
	// A cached entry of tenant A is never served to tenant B.
	if _, err := f.router.Execute(context.Background(), bob, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"a"}`)}); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("tenant B on A's cached connection = %v, want not_found", err)
	}
}

func TestTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name string
		who  switchboard.Principal
		want map[string][]ConnectionRef
	}{
		{name: "owner sees private and shared, not one needing reconnect", who: alice, want: map[string][]ConnectionRef{
			"fake_greet": {{ID: "con_a1", Label: "alice-fake", Account: "alice-fake", Owner: "usr_alice"}, {ID: "con_a2", Label: "team", Account: "team", Owner: "usr_alice"}},
		}},
		{name: "colleague sees shared only", who: carol, want: map[string][]ConnectionRef{"fake_greet": {{ID: "con_a2", Label: "team", Account: "team", Owner: "usr_alice"}}}},
		{name: "other tenant sees its own", who: bob, want: map[string][]ConnectionRef{"fake_greet": {{ID: "con_b1", Label: "bob-fake", Account: "bob-fake", Owner: "usr_bob"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bs, err := f.router.Tools(context.Background(), tt.who)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]ConnectionRef{}
			for _, b := range bs {
				got[b.Tool.Name] = b.Connections
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpstreamRefusalMarksNeedsReconnect(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"gone"}`)})
	if switchboard.CodeOf(err) != switchboard.CodeReconnect {
		t.Fatalf("error = %v, want reconnect", err)
	}
	testwait.Recv(t, f.tokens, "the upstream to receive the call")
	if diff := cmp.Diff([]string{"con_a1"}, f.conns.marked); diff != "" {
		t.Errorf("marked (-want +got):\n%s", diff)
	}
	// The next call reads the connection again, sees its status and does not reach the upstream.
	_, err = f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"ada"}`)})
	if switchboard.CodeOf(err) != switchboard.CodeReconnect {
		t.Errorf("call after the refusal = %v, want reconnect", err)
	}
	select {
	case <-f.tokens:
		t.Error("a call on a connection needing reconnect reached the upstream")
	default:
	}
}

func TestForgetDuringOpenIsNotCached(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.conns.openGate = make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"a"}`)})
		done <- err
	}()
	testwait.Until(t, "the call to open its connection", func() bool { return f.conns.opens.Load() > 0 })
	// The connection changes while its record is being read: what was read must not be cached.
	f.router.Forget("ten_a", "con_a1")
	close(f.conns.openGate)
	if err := testwait.Recv(t, done, "the call to answer"); err != nil {
		t.Fatal(err)
	}
	testwait.Recv(t, f.tokens, "the upstream to receive the call")
	if _, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"a"}`)}); err != nil {
		t.Fatal(err)
	}
	testwait.Recv(t, f.tokens, "the upstream to receive the call")
	if n := f.conns.opens.Load(); n != 2 {
		t.Errorf("opens = %d, want 2: the entry read across a change was cached", n)
	}
}

func TestSaturatedAuditRefusesCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.audit.full = true
	_, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"a"}`)})
	if switchboard.CodeOf(err) != switchboard.CodeUnavailable {
		t.Fatalf("error = %v, want unavailable", err)
	}
	select {
	case <-f.tokens:
		t.Error("a call the audit log could not record reached the upstream")
	default:
	}
}

func TestArgsHashIsKeyed(t *testing.T) {
	t.Parallel()
	hashWith := func(key string) string {
		f := newFixture(t)
		f.router.argsKey = []byte(key)
		_, _ = f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"a"}`)})
		return f.audit.last(t).ArgsHash
	}
	plain := sha256.Sum256([]byte(`{"name":"a"}`))
	a, a2, b := hashWith("k1"), hashWith("k1"), hashWith("k2")
	if a != a2 || a == b || a == hex.EncodeToString(plain[:]) {
		t.Errorf("args hash with k1 %s, again %s, with k2 %s: want stable per key, different across keys, not the bare SHA-256", a, a2, b)
	}
}

// TestForgetEverythingAfterAGap: Forget with no connection (the change feed's gap:
// changes may have been missed) drops every cached client, so the next call reads the
// connection again.
func TestForgetEverythingAfterAGap(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	call := func() string {
		t.Helper()
		if _, err := f.router.Execute(context.Background(), alice, Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"a"}`)}); err != nil {
			t.Fatal(err)
		}
		return testwait.Recv(t, f.tokens, "the upstream to receive the call")
	}
	call()
	f.conns.add(connections.Connection{ID: "con_a1", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "fake", AccountLabel: "alice-fake", Status: connections.StatusActive}, "token-after-gap")
	f.router.Forget("", "")
	if got := call(); got != "Bearer token-after-gap" {
		t.Errorf("after the gap the upstream saw %q, want the connection read again", got)
	}
}

// TestToolsWaitOnlyForProvidersInUse: while deferred providers load (OpenAPI
// descriptions read after the node is ready), a principal with no connection of theirs
// gets its tools at once; one with such a connection waits for the load, and is told
// the hub is still loading when its request's time runs out first.
func TestToolsWaitOnlyForProvidersInUse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := f.router.registry.Defer(map[string]string{"slowapi": "slowapi.json"}); err != nil {
		t.Fatal(err)
	}
	// The load never ends in this test: any wait lasts until the context's deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bindings, err := f.router.Tools(ctx, alice)
	if err != nil || len(bindings) == 0 || bindings[0].Tool.Name != "fake_greet" {
		t.Fatalf("alice's tools while a provider she does not use loads: %v, %v; want fake_greet at once", bindings, err)
	}
	// Alice's account becomes one of the loading provider's.
	f.conns.add(connections.Connection{ID: "con_a1", TenantID: "ten_a", OwnerUserID: "usr_alice", Provider: "slowapi", AccountLabel: "alice-slow", Status: connections.StatusActive}, "token-a1")
	expired, stop := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer stop()
	if _, err := f.router.Tools(expired, alice); switchboard.CodeOf(err) != switchboard.CodeUnavailable {
		t.Errorf("alice's tools while her provider loads, her time up: %v; want unavailable", err)
	}
}
