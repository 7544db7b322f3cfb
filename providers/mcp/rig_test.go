package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/tenants"
)

// rig is a hub without HTTP: two tenants, the connections service, the remote MCP
// service (allowed to reach loopback, where the test servers are) and the router.
type rig struct {
	conns   *connections.Service
	store   *connections.Store // conns's, for another node's service
	remote  *remotemcp.Service
	router  *router.Router
	audit   *memAudit
	a, b    switchboard.Principal
	changes chan string   // connection ids the subscribers were told about
	clock   *atomic.Int64 // how far the connections service's clock is ahead, in nanoseconds
}

type memAudit struct {
	mu     sync.Mutex
	events []audit.Event
}

func (m *memAudit) Record(e audit.Event) {
	if e.Outcome == audit.OutcomeInFlight {
		return // the call's completed row, of the same id, follows: that one is kept
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, e)
}

func (m *memAudit) toolCalls() []audit.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []audit.Event
	for _, e := range m.events {
		if e.Kind == audit.KindToolCall {
			out = append(out, e)
		}
	}
	return out
}

func newRig(t *testing.T, db *gorm.DB) *rig {
	t.Helper()
	return newRigWith(t, db, providers.NewRegistry())
}

// newRigWith is newRig with built-in providers, and telemetry when given.
func newRigWith(t *testing.T, db *gorm.DB, reg *providers.Registry, tel ...*telemetry.Telemetry) *rig {
	t.Helper()
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &memAudit{}
	store := connections.NewStore(db, kr)
	svc := connections.NewService(store, reg, &providers.Transports{}, rec)
	clock := &atomic.Int64{}
	svc.ConfigureOAuth(connections.OAuthConfig{RedirectURL: "http://hub.test/oauth/callback", Now: func() time.Time { return time.Now().Add(time.Duration(clock.Load())) }})
	guard, err := egress.NewGuard(true, nil)
	if err != nil {
		t.Fatal(err)
	}
	ro := remotemcp.Options{Connections: svc, Guard: guard, Version: "test", Timeout: 20 * time.Second, Registry: reg}
	var rtel *telemetry.Telemetry
	if len(tel) > 0 {
		rtel = tel[0]
		ro.Wrap = rtel.UpstreamTransport
	}
	remote, err := remotemcp.New(ro)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remote.Close)
	r := &rig{conns: svc, store: store, remote: remote, audit: rec, changes: make(chan string, 64), clock: clock}
	r.router = router.New(router.Options{Registry: reg, Connections: svc, Audit: rec, ArgsKey: []byte("k"), Telemetry: rtel})
	svc.Subscribe(r.router.Forget)
	svc.Subscribe(remote.ConnectionChanged)
	svc.Subscribe(func(_ switchboard.TenantID, id string) {
		select {
		case r.changes <- id:
		default:
		}
	})
	r.a = newUser(t, db, "a")
	r.b = newUser(t, db, "b")
	return r
}

func newUser(t *testing.T, db *gorm.DB, slug string) switchboard.Principal {
	t.Helper()
	ctx := context.Background()
	ts := tenants.NewStore(db)
	slug += "-" + switchboard.RandomToken(4)
	ten, err := ts.CreateTenant(ctx, slug, slug)
	if err != nil {
		t.Fatal(err)
	}
	u, err := ts.CreateUser(ctx, ten.ID, "owner@"+slug+".test", switchboard.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	return switchboard.Principal{TenantID: ten.ID, TenantSlug: slug, Kind: switchboard.PrincipalUser, UserID: u.ID, Role: switchboard.RoleOwner}
}

// toolNames lists the names of the tools p may call.
func (r *rig) toolNames(t *testing.T, p switchboard.Principal) []string {
	t.Helper()
	bs, err := r.router.Tools(context.Background(), p)
	if err != nil {
		t.Fatalf("router tools: %v", err)
	}
	var out []string
	for _, b := range bs {
		out = append(out, b.Tool.Name)
	}
	return out
}

// mcpServer is an MCP server (mcp-go) on httptest that records the Authorization header
// of every request and refuses requests without the wanted one.
type mcpServer struct {
	mcp  *server.MCPServer
	http *httptest.Server
	want string // the Authorization header required ("" for none)

	mu      sync.Mutex
	auths   []string
	deletes int // DELETE requests: sessions the hub ended
}

func newMCPServer(t *testing.T, want string) *mcpServer {
	t.Helper()
	s := &mcpServer{want: want}
	s.mcp = server.NewMCPServer("upstream", "1.0", server.WithToolCapabilities(true))
	s.mcp.AddTool(mcpgo.NewTool("shout",
		mcpgo.WithDescription("Shout a word back."),
		mcpgo.WithString("word", mcpgo.Required(), mcpgo.Description("The word")),
		mcpgo.WithReadOnlyHintAnnotation(true),
	), func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		w, _ := req.GetArguments()["word"].(string)
		if w == "fail" {
			return mcpgo.NewToolResultError("cannot shout fail"), nil
		}
		return mcpgo.NewToolResultText(w + "!"), nil
	})
	h := server.NewStreamableHTTPServer(s.mcp)
	s.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		s.mu.Lock()
		s.auths = append(s.auths, got)
		if r.Method == http.MethodDelete {
			s.deletes++
		}
		s.mu.Unlock()
		if s.want != "" && got != s.want {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		testwait.CloseServer(t, s.http)
	})
	return s
}

func (s *mcpServer) url() string { return s.http.URL + "/mcp" }

func (s *mcpServer) authorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths...)
}
