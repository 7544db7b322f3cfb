package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	"github.com/switchboard-hub/switchboard/openapis"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestAgentsOfConnectionTools: the tools a connection brings itself (a remote MCP
// server's, an API's added by its OpenAPI description) are tools like any other for
// agents. The catalog the builder reads groups the server's tools under the server, as
// it does the API's under the API; an agent saved with one of each, bound to its
// connection, keeps both through POST and PUT and shows their provider and title; a
// tool its connection does not offer is a 400 naming the field that stores nothing;
// and the agent's MCP URL lists both and runs them on their connections.
func TestAgentsOfConnectionTools(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		agentsOfConnectionTools(t, db)
	})
}

func agentsOfConnectionTools(t *testing.T, db *gorm.DB) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	const token = "remote-bearer-0123456789"
	remoteUp := newShoutServer(t, token)
	notes := newNotesUpstream(t)

	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "k.json"))
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry()
	transports := &providers.Transports{}
	svc := connections.NewService(connections.NewStore(db, kr), reg, transports, nil)
	guard, err := egress.NewGuard(false, []string{"127.0.0.1/32"}) // the fake upstreams only
	if err != nil {
		t.Fatal(err)
	}
	remote, err := remotemcp.New(remotemcp.Options{Connections: svc, Guard: guard, Logger: log, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remote.Close)
	apis, err := openapis.New(openapis.Options{Store: openapis.NewStore(db), Connections: svc, Registry: reg, Transports: transports, Guard: guard, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	agentService := agents.NewService(agents.NewStore(db), reg, svc)
	rtr := router.New(router.Options{Registry: reg, Connections: svc, Transports: transports, Logger: log, ArgsKey: []byte("k"), Policies: agentService, Agents: agentService})
	adapter := mcpadapter.New(mcpadapter.Options{Router: rtr, Auth: ts, Agents: agentService, Logger: log})
	t.Cleanup(func() { adapter.Close(context.Background()) })
	svc.Subscribe(rtr.Forget)
	svc.Subscribe(adapter.ConnectionChanged)
	svc.Subscribe(remote.ConnectionChanged)
	agentService.Subscribe(adapter.AgentChanged)
	engine := api.New(api.Options{Registry: reg, Tenants: ts, Connections: svc, Tools: rtr, RemoteMCP: remote, OpenAPI: apis,
		Agents: agentService, Lister: adapter, Logger: log, PublicURL: "https://hub.example.com"})
	engine.Any(mcpadapter.Prefix+":tenant/agents/:agent", gin.WrapH(adapter))
	srv := httptest.NewServer(engine)
	t.Cleanup(func() { testwait.CloseServer(t, srv) })

	tenantA, err := ts.CreateTenant(ctx, "conn-tools-a", "A")
	if err != nil {
		t.Fatal(err)
	}
	tenantB, err := ts.CreateTenant(ctx, "conn-tools-b", "B")
	if err != nil {
		t.Fatal(err)
	}
	_, a, _, err := ts.CreateUserWithKey(ctx, tenantA.ID, "o@a.test", switchboard.RoleOwner, "test")
	if err != nil {
		t.Fatal(err)
	}
	_, b, _, err := ts.CreateUserWithKey(ctx, tenantB.ID, "o@b.test", switchboard.RoleOwner, "test")
	if err != nil {
		t.Fatal(err)
	}
	do := keyedRequests(t, srv, token, "notes-key-0123456789")
	want := func(key, method, path, body string, status int, out any) {
		t.Helper()
		got, raw := do(key, method, path, body)
		if got != status {
			t.Fatalf("%s %s = %d %s, want %d", method, path, got, raw, status)
		}
		if out != nil {
			if err := json.Unmarshal([]byte(raw), out); err != nil {
				t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
			}
		}
	}

	var registered struct {
		Connection struct {
			ID string `json:"id"`
		} `json:"connection"`
	}
	want(a, "POST", "/api/remote-mcp", `{"name":"up","url":"`+remoteUp.URL+`","auth":"bearer","token":"`+token+`"}`, http.StatusCreated, &registered)
	serverConn := registered.Connection.ID
	want(a, "POST", "/api/openapi-providers", `{"name":"notes","description":`+quote(notesDescription)+`,"base_url":"`+notes.URL+`"}`, http.StatusCreated, nil)
	var connected struct {
		ID string `json:"id"`
	}
	want(a, "POST", "/api/connections", `{"provider":"notes","token":"notes-key-0123456789"}`, http.StatusCreated, &connected)
	apiConn := connected.ID

	// The catalog: the server is a group of its own beside the API, with its tools.
	type group struct {
		Name       string `json:"name"`
		Title      string `json:"title"`
		Operations int    `json:"operations"`
		OpenAPI    bool   `json:"openapi"`
		Remote     bool   `json:"remote"`
	}
	var catalog struct {
		Providers []group `json:"providers"`
	}
	want(a, "GET", "/api/providers", "", http.StatusOK, &catalog)
	if diff := cmp.Diff([]group{{Name: "notes", Title: "Notes", Operations: 2, OpenAPI: true}, {Name: "up", Title: "up", Operations: 1, Remote: true}}, catalog.Providers); diff != "" {
		t.Errorf("GET /api/providers (-want +got):\n%s", diff)
	}
	type operation struct {
		Tool        string          `json:"tool"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	var ops struct {
		Operations []operation `json:"operations"`
	}
	want(a, "GET", "/api/providers/up/operations", "", http.StatusOK, &ops)
	if len(ops.Operations) != 1 || ops.Operations[0].Tool != "up_shout" || ops.Operations[0].Title != "shout" ||
		ops.Operations[0].Description != "Shout a word back." || !strings.Contains(string(ops.Operations[0].InputSchema), `"word"`) {
		t.Errorf("GET /api/providers/up/operations = %+v, want up_shout with its description and schema", ops.Operations)
	}
	want(a, "GET", "/api/providers/notes/operations", "", http.StatusOK, &ops)
	if len(ops.Operations) != 2 || ops.Operations[0].Tool != "notes_list_notes" {
		t.Errorf("GET /api/providers/notes/operations = %+v, want the API's two tools", ops.Operations)
	}
	for _, tt := range []struct{ name, key, path string }{
		{"another tenant's server", b, "/api/providers/up/operations"},
		{"the remote provider itself", a, "/api/providers/mcp/operations"},
	} {
		if status, body := do(tt.key, "GET", tt.path, ""); status != http.StatusNotFound {
			t.Errorf("%s: GET %s = %d %s, want 404", tt.name, tt.path, status, body)
		}
	}
	if _, body := do(b, "GET", "/api/providers", ""); strings.Contains(body, `"up"`) {
		t.Errorf("another tenant's catalog lists the server: %s", body)
	}

	// Saving: a tool the connection does not offer is refused on the field, and stores nothing.
	bad := []struct{ name, key, tools, field string }{
		{"a tool the server does not have", a, `[{"tool":"up_whisper","connection_id":"` + serverConn + `"}]`, "tools[0].tool"},
		{"the server's tool on the API's connection", a, `[{"tool":"up_shout","connection_id":"` + apiConn + `"}]`, "tools[0].tool"},
		{"the API's tool on the server's connection", a, `[{"tool":"notes_list_notes","connection_id":"` + serverConn + `"}]`, "tools[0].tool"},
		{"no connection", a, `[{"tool":"up_shout"}]`, "tools[0].connection_id"},
		{"another tenant's server", b, `[{"tool":"up_shout","connection_id":"` + serverConn + `"}]`, "tools[0].connection_id"},
	}
	for _, tt := range bad {
		status, body := do(tt.key, "POST", "/api/agents", `{"name":"bad","tools":`+tt.tools+`}`)
		if status != http.StatusBadRequest || !strings.Contains(body, `"field":"`+tt.field+`"`) {
			t.Errorf("%s: %d %s, want 400 on %s", tt.name, status, body, tt.field)
		}
	}
	if _, body := do(a, "GET", "/api/agents", ""); body != `{"agents":[]}` {
		t.Errorf("after refused saves: %s, want no agent", body)
	}

	type agentTool struct {
		Tool         string `json:"tool"`
		ConnectionID string `json:"connection_id"`
		Provider     string `json:"provider"`
		Title        string `json:"title"`
		ReadOnly     bool   `json:"read_only"`
	}
	type agentView struct {
		ID      string      `json:"id"`
		Version int64       `json:"version"`
		MCPURL  string      `json:"mcp_url"`
		Tools   []agentTool `json:"tools"`
	}
	shout := agentTool{Tool: "up_shout", ConnectionID: serverConn, Provider: remotemcp.Provider, Title: "shout", ReadOnly: true}
	list := agentTool{Tool: "notes_list_notes", ConnectionID: apiConn, Provider: openapis.Provider, Title: "List notes", ReadOnly: true}
	var created agentView
	want(a, "POST", "/api/agents", `{"name":"helper","tools":[{"tool":"up_shout","connection_id":"`+serverConn+`"},{"tool":"notes_list_notes","connection_id":"`+apiConn+`"}]}`, http.StatusCreated, &created)
	if diff := cmp.Diff([]agentTool{shout, list}, created.Tools); diff != "" {
		t.Errorf("POST /api/agents tools (-want +got):\n%s", diff)
	}
	var replaced agentView
	want(a, "PUT", "/api/agents/"+created.ID, `{"name":"helper","version":1,"tools":[{"tool":"notes_list_notes","connection_id":"`+apiConn+`"},{"tool":"up_shout","connection_id":"`+serverConn+`"}]}`, http.StatusOK, &replaced)
	if diff := cmp.Diff([]agentTool{list, shout}, replaced.Tools); diff != "" || replaced.Version != 2 {
		t.Errorf("PUT /api/agents/{id}: version %d, tools (-want +got):\n%s", replaced.Version, diff)
	}
	var read agentView
	want(a, "GET", "/api/agents/"+created.ID, "", http.StatusOK, &read)
	if diff := cmp.Diff([]agentTool{list, shout}, read.Tools); diff != "" {
		t.Errorf("GET /api/agents/{id} tools (-want +got):\n%s", diff)
	}

	// The agent's URL lists both tools and runs each on its connection.
	var minted struct {
		Key string `json:"key"`
	}
	want(a, "POST", "/api/agents/"+created.ID+"/keys", `{"name":"k"}`, http.StatusCreated, &minted)
	c, err := client.NewStreamableHttpClient(srv.URL+mcpadapter.Prefix+tenantA.Slug+"/agents/"+created.ID,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + minted.Key}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	listed, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range listed.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "up_shout") || !slices.Contains(names, "notes_list_notes") || slices.Contains(names, "notes_add_note") {
		t.Errorf("the agent's URL lists %v, want up_shout and notes_list_notes and not the API's tool it did not pick", names)
	}
	for _, call := range []struct {
		tool string
		args map[string]any
		says string
	}{
		{"up_shout", map[string]any{"word": "agent"}, "agent!"},
		{"notes_list_notes", map[string]any{"q": "agent"}, "hello agent"},
	} {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = call.tool, call.args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("call %s: %v", call.tool, err)
		}
		raw, _ := json.Marshal(res)
		if res.IsError || !strings.Contains(string(raw), call.says) {
			t.Errorf("call %s = %s, want it to say %q", call.tool, raw, call.says)
		}
	}
	var got []string
	for _, r := range notes.requests() {
		if r.URL.Path == "/notes" {
			got = append(got, r.Method+" "+r.URL.RawQuery+" "+r.Header.Get("X-Notes-Key"))
		}
	}
	if diff := cmp.Diff([]string{"GET q=agent notes-key-0123456789"}, got); diff != "" {
		t.Errorf("the API got (-want +got):\n%s", diff)
	}
}
