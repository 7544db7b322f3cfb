package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/openapis"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/tenants"
)

// notesDescription is a small API's description, in YAML, whose key goes in a header.
const notesDescription = `openapi: 3.0.3
info: {title: Notes, version: "1", description: "A tenant's own notes API."}
servers: [{url: "https://notes.example.test"}]
security: [{key: []}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Notes-Key}
paths:
  /notes:
    get:
      operationId: listNotes
      summary: List notes
      tags: [notes]
      parameters: [{name: q, in: query, schema: {type: string}}]
      responses:
        "200":
          description: The notes
          content: {application/json: {schema: {type: array, items: {type: object, properties: {text: {type: string}}}}}}
    post:
      operationId: addNote
      summary: Add a note
      tags: [write]
      requestBody: {required: true, content: {application/json: {schema: {type: object, required: [text], properties: {text: {type: string}}}}}}
      responses: {"201": {description: Added}}
`

// notesUpstream is the notes API: it answers its description at /openapi.yaml and its
// notes to a request with the key in its header, and records what it was sent.
type notesUpstream struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
}

func newNotesUpstream(t *testing.T) *notesUpstream {
	u := &notesUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, r.Clone(context.Background()))
		u.mu.Unlock()
		switch {
		case r.URL.Path == "/openapi.yaml":
			w.Header().Set("Content-Type", "application/yaml")
			_, _ = io.WriteString(w, notesDescription)
		case r.URL.Path != "/notes":
			http.NotFound(w, r)
		case r.Header.Get("X-Notes-Key") != "notes-key-0123456789":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"message":"bad key"}`)
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `[{"text":"hello `+r.URL.Query().Get("q")+`"}]`)
		default:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	}))
	t.Cleanup(func() { testwait.CloseServer(t, u.Server) })
	return u
}

func (u *notesUpstream) requests() []*http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*http.Request(nil), u.seen...)
}

// TestOpenAPIProvidersAPI: a tenant admin adds an API by its OpenAPI description (inline
// YAML, or by URL) over REST; it is listed for that tenant alone, in the catalog too,
// its users connect it with POST /api/connections like any provider, and its operations
// run as tools with the credential where the description says. Another tenant never
// sees, connects, calls or deletes it; a member cannot add one; bad input is a 400
// naming the field and stores nothing; deleting it disconnects its connections and its
// tools go.
func TestOpenAPIProvidersAPI(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		openAPIProvidersAPI(t, db)
	})
}

func openAPIProvidersAPI(t *testing.T, db *gorm.DB) {
	ctx := context.Background()
	up := newNotesUpstream(t)
	log := slog.New(slog.DiscardHandler)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	ts.SetPasswordCost(4)
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "k.json"))
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry()
	if err := all.Register(reg); err != nil {
		t.Fatal(err)
	}
	transports := &providers.Transports{}
	svc := connections.NewService(connections.NewStore(db, kr), reg, transports, nil)
	guard, err := egress.NewGuard(false, []string{"127.0.0.1/32"}) // the fake upstream only
	if err != nil {
		t.Fatal(err)
	}
	apis, err := openapis.New(openapis.Options{Store: openapis.NewStore(db), Connections: svc, Registry: reg, Transports: transports, Guard: guard, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	rtr := router.New(router.Options{Registry: reg, Connections: svc, Transports: transports, Logger: log, ArgsKey: []byte("k")})
	svc.Subscribe(rtr.Forget)
	srv := httptest.NewServer(api.New(api.Options{Registry: reg, Tenants: ts, Connections: svc, Tools: rtr, OpenAPI: apis, Logger: log}))
	t.Cleanup(func() { testwait.CloseServer(t, srv) })

	keyOf := func(tenant switchboard.TenantID, email string, role switchboard.Role) string {
		_, key, _, err := ts.CreateUserWithKey(ctx, tenant, email, role, "test")
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	tenantA, err := ts.CreateTenant(ctx, "oas-a", "A")
	if err != nil {
		t.Fatal(err)
	}
	tenantB, err := ts.CreateTenant(ctx, "oas-b", "B")
	if err != nil {
		t.Fatal(err)
	}
	a, member, b := keyOf(tenantA.ID, "o@a.test", switchboard.RoleOwner), keyOf(tenantA.ID, "m@a.test", switchboard.RoleMember), keyOf(tenantB.ID, "o@b.test", switchboard.RoleOwner)
	do := keyedRequests(t, srv, "notes-key-0123456789")
	inline := func(extra string) string {
		return `{"name":"notes","description":` + quote(notesDescription) + `,"base_url":"` + up.URL + `"` + extra + `}`
	}

	bad := []struct{ name, body, field, says string }{
		{"no description", `{"name":"notes"}`, "description", "is required"},
		{"bad name", `{"name":"Notes!","description":` + quote(notesDescription) + `}`, "name", "snake_case"},
		{"a built-in provider's name", `{"name":"github","description":` + quote(notesDescription) + `}`, "name", "github"},
		{"not a description", `{"name":"notes","description":{"hello":"world"}}`, "description", "neither"},
		{"an unknown scheme", inline(`,"auth":"magic"`), "auth", `magic\" is not one of the description's securitySchemes (key)`},
		{"an unknown operation", inline(`,"operations":["feedNotes"]`), "operations", `feedNotes\" is not an operationId`},
		{"both inline and by URL", inline(`,"url":"` + up.URL + `/openapi.yaml"`), "url", "not both"},
		{"a private base URL", `{"name":"notes","description":` + quote(notesDescription) + `,"base_url":"http://10.1.2.3/api"}`, "base_url", "10.1.2.3"},
		{"metadata by URL", `{"name":"notes","url":"http://169.254.169.254/latest/openapi.json"}`, "url", "169.254.169.254"},
		{"a URL that is no description", `{"name":"notes","url":"` + up.URL + `/missing"}`, "url", "HTTP 404"},
		{"an unknown field", inline(`,"scopes":["x"]`), "scopes", "not a known field"},
	}
	for _, tt := range bad {
		status, body := do(a, "POST", "/api/openapi-providers", tt.body)
		if status != http.StatusBadRequest || !strings.Contains(body, `"field":"`+tt.field+`"`) || !strings.Contains(body, tt.says) {
			t.Errorf("%s: %d %s, want 400 on %s saying %s", tt.name, status, body, tt.field, tt.says)
		}
	}
	if status, body := do(a, "GET", "/api/openapi-providers", ""); status != 200 || body != `{"providers":[]}` {
		t.Fatalf("after bad input: %d %s, want nothing stored", status, body)
	}
	if status, body := do(member, "POST", "/api/openapi-providers", inline("")); status != http.StatusForbidden {
		t.Errorf("a member adds an API: %d %s", status, body)
	}
	if status, body := do(a, "POST", "/api/openapi-providers", inline("")); status != http.StatusCreated || !strings.Contains(body, `"tools":["notes_list_notes","notes_add_note"]`) {
		t.Fatalf("add inline: %d %s", status, body)
	}
	if status, body := do(a, "POST", "/api/openapi-providers", `{"name":"notes_ro","url":"`+up.URL+`/openapi.yaml","base_url":"`+up.URL+`","tags":["notes"]}`); status != http.StatusCreated ||
		!strings.Contains(body, `"tools":["notes_ro_list_notes"]`) || !strings.Contains(body, `"source_url":"`+up.URL+`/openapi.yaml"`) {
		t.Fatalf("add by URL: %d %s", status, body)
	}
	if status, body := do(a, "POST", "/api/openapi-providers", inline("")); status != http.StatusConflict || !strings.Contains(body, `"field":"name"`) {
		t.Errorf("the name again: %d %s, want 409 on name", status, body)
	}

	steps := []struct {
		name, key, method, path, body string
		status                        int
		contains, lacks               string
	}{
		{name: "listed", key: a, method: "GET", path: "/api/openapi-providers", status: 200, contains: `"name":"notes","title":"Notes"`},
		{name: "listed to a member", key: member, method: "GET", path: "/api/openapi-providers", status: 200, contains: `"name":"notes_ro"`},
		{name: "in the catalog", key: a, method: "GET", path: "/api/providers", status: 200, contains: `"name":"notes","title":"Notes","description":"A tenant's own notes API.","auth_kinds":["api_key"]`},
		{name: "its operations", key: a, method: "GET", path: "/api/providers/notes/operations", status: 200, contains: `"tool":"notes_add_note"`},
		{name: "not listed to another tenant", key: b, method: "GET", path: "/api/openapi-providers", status: 200, lacks: "notes"},
		{name: "not in another tenant's catalog", key: b, method: "GET", path: "/api/providers", status: 200, lacks: `"notes`},
		{name: "no operations for another tenant", key: b, method: "GET", path: "/api/providers/notes/operations", status: 404},
		{name: "another tenant cannot connect it", key: b, method: "POST", path: "/api/connections", body: `{"provider":"notes","token":"notes-key-0123456789"}`, status: 400, contains: `"field":"provider"`},
		{name: "another tenant cannot delete it", key: b, method: "DELETE", path: "/api/openapi-providers/notes", status: 404},
		{name: "a member cannot delete it", key: member, method: "DELETE", path: "/api/openapi-providers/notes", status: 403},
		{name: "connect without a token", key: a, method: "POST", path: "/api/connections", body: `{"provider":"notes","token":" "}`, status: 400, contains: `"field":"token"`},
		{name: "connect", key: a, method: "POST", path: "/api/connections", body: `{"provider":"notes","token":"notes-key-0123456789"}`, status: 201, contains: `"provider":"openapi"`},
		{name: "its tools", key: a, method: "GET", path: "/api/tools", status: 200, contains: `"tool":"notes_list_notes"`},
		{name: "a call", key: a, method: "POST", path: "/api/tools/notes_list_notes/call", body: `{"arguments":{"q":"there"}}`, status: 200, contains: `hello there`},
		{name: "a call with a bad argument", key: a, method: "POST", path: "/api/tools/notes_add_note/call", body: `{"arguments":{"body":{}}}`, status: 400, contains: `text`},
		{name: "no tools for another tenant", key: b, method: "GET", path: "/api/tools", status: 200, lacks: "notes_"},
		{name: "no call for another tenant", key: b, method: "POST", path: "/api/tools/notes_list_notes/call", body: `{"arguments":{}}`, status: 404},
		{name: "delete", key: a, method: "DELETE", path: "/api/openapi-providers/notes", status: 204},
		{name: "its tools are gone", key: a, method: "GET", path: "/api/tools", status: 200, lacks: "notes_list_notes"},
		{name: "its connection is gone", key: a, method: "GET", path: "/api/connections", status: 200, lacks: `"provider":"openapi"`},
		{name: "gone from the catalog", key: a, method: "GET", path: "/api/providers/notes/operations", status: 404},
		{name: "the other API stays", key: a, method: "GET", path: "/api/openapi-providers", status: 200, contains: `"name":"notes_ro"`},
	}
	for _, s := range steps {
		status, body := do(s.key, s.method, s.path, s.body)
		if status != s.status || !strings.Contains(body, s.contains) || (s.lacks != "" && strings.Contains(body, s.lacks)) {
			t.Errorf("%s: %d %s, want %d containing %q and not %q", s.name, status, body, s.status, s.contains, s.lacks)
		}
	}
	var calls int
	for _, r := range up.requests() {
		if r.URL.Path != "/notes" {
			continue
		}
		calls++
		if r.Header.Get("X-Notes-Key") != "notes-key-0123456789" || r.Header.Get("Authorization") != "" || r.URL.Query().Get("q") != "there" {
			t.Errorf("the API got %s %s with %v", r.Method, r.URL, r.Header)
		}
	}
	if calls != 1 {
		t.Errorf("the API got %d calls, want 1", calls)
	}
}

// quote is s as a JSON string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
