package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/agents"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/tenants"
)

// docsServer is a remote MCP server (mcp-go) with a tool, a prompt, a listed resource
// and a resource template: its tool "find" returns a resource_link to a page that is
// not listed (docs://pages/7), read through the template. It requires the bearer
// token docs-secret and records the methods it was asked.
type docsServer struct {
	mcp     *server.MCPServer
	http    *httptest.Server
	mu      sync.Mutex
	methods []string
}

func newDocsServer(t *testing.T) *docsServer {
	t.Helper()
	d := &docsServer{}
	s := server.NewMCPServer("docs", "1.0", server.WithToolCapabilities(true), server.WithPromptCapabilities(true), server.WithResourceCapabilities(false, true))
	s.AddTool(mcpgo.NewTool("find", mcpgo.WithDescription("Find a page."), mcpgo.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return &mcpgo.CallToolResult{Content: []mcpgo.Content{
				mcpgo.NewTextContent("found one page"),
				mcpgo.NewResourceLink("docs://pages/7", "page 7", "The page found", "text/plain"),
			}}, nil
		})
	s.AddPrompt(mcpgo.NewPrompt("summarize", mcpgo.WithPromptDescription("Summarize the docs on a topic."),
		mcpgo.WithArgument("topic", mcpgo.RequiredArgument())),
		func(_ context.Context, req mcpgo.GetPromptRequest) (*mcpgo.GetPromptResult, error) {
			return mcpgo.NewGetPromptResult("Summary", []mcpgo.PromptMessage{
				mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewTextContent("Summarize the docs on "+req.Params.Arguments["topic"])),
				mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewEmbeddedResource(mcpgo.TextResourceContents{URI: "docs://pages/index", MIMEType: "text/plain", Text: "the index"})),
			}), nil
		})
	s.AddResource(mcpgo.NewResource("docs://pages/index", "index", mcpgo.WithMIMEType("text/plain")),
		func(_ context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
			return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "the index"}}, nil
		})
	s.AddResourceTemplate(mcpgo.NewResourceTemplate("docs://pages/{id}", "page"),
		func(_ context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
			return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "page " + strings.TrimPrefix(req.Params.URI, "docs://pages/")}}, nil
		})
	h := server.NewStreamableHTTPServer(s)
	d.mcp = s
	d.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer docs-secret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if m := jsonrpcMethod(r); m != "" {
			d.mu.Lock()
			d.methods = append(d.methods, m)
			d.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { testwait.CloseServer(t, d.http) })
	return d
}

// jsonrpcMethod returns the method of a JSON-RPC request body, leaving the body to read.
func jsonrpcMethod(r *http.Request) string {
	if r.Body == nil {
		return ""
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return ""
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	return msg.Method
}

func (d *docsServer) asked(method string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Contains(d.methods, method)
}

// TestRemoteContentThroughHub registers a private remote server with prompts and
// resources and looks at it through the hub's MCP URLs: its owner lists its prompts,
// resources and templates namespaced, gets the prompt and reads the resources (the
// server sees the connection's token), and reads the resource_link a tool returned.
// Another member of the tenant, an agent without the server's tools, and another
// tenant get none of it: not listed, and a read or get is refused.
func TestRemoteContentThroughHub(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	reg := providers.NewRegistry()
	r := newRigWith(t, db, reg)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	agentService := agents.NewService(agents.NewStore(db), reg, r.conns)
	rtr := router.New(router.Options{Registry: reg, Connections: r.conns, Audit: r.audit, ArgsKey: []byte("k"), Agents: agentService})
	adapter := mcpadapter.New(mcpadapter.Options{Router: rtr, Auth: ts, Agents: agentService, Remote: r.remote})
	r.conns.Subscribe(adapter.ConnectionChanged)
	hub := httptest.NewServer(adapter)
	t.Cleanup(func() { testwait.CloseServer(t, hub) })

	docs := newDocsServer(t)
	reg1, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "docs", URL: docs.http.URL + "/mcp", Auth: remotemcp.AuthBearer, Token: "docs-secret"})
	if err != nil {
		t.Fatal(err)
	}
	other := newMCPServer(t, "")
	reg2, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "other", URL: other.url(), Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	// A server without tools still brings its prompts.
	notes := server.NewMCPServer("notes", "1.0", server.WithToolCapabilities(true), server.WithPromptCapabilities(true))
	notes.AddPrompt(mcpgo.NewPrompt("hello"), func(context.Context, mcpgo.GetPromptRequest) (*mcpgo.GetPromptResult, error) {
		return mcpgo.NewGetPromptResult("Hello", []mcpgo.PromptMessage{mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewTextContent("hello"))}), nil
	})
	notesHTTP := httptest.NewServer(server.NewStreamableHTTPServer(notes))
	t.Cleanup(func() { testwait.CloseServer(t, notesHTTP) })
	if _, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "notes", URL: notesHTTP.URL + "/mcp"}); err != nil {
		t.Fatal(err)
	}
	member, err := ts.CreateUser(ctx, r.a.TenantID, "member@"+r.a.TenantSlug+".test", switchboard.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	withDocs, err := agentService.Create(ctx, r.a, agents.Input{Name: "Reader", Tools: []agents.ToolInput{{Tool: "docs_find", ConnectionID: reg1.Connection.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	withoutDocs, err := agentService.Create(ctx, r.a, agents.Input{Name: "Shouter", Tools: []agents.ToolInput{{Tool: "other_shout", ConnectionID: reg2.Connection.ID}}})
	if err != nil {
		t.Fatal(err)
	}

	connect := func(key, path string) *client.Client { return mcpClient(t, hub.URL+path, key, false) }
	userKey := func(tenant switchboard.TenantID, user string) string {
		t.Helper()
		key, _, err := ts.CreateKey(ctx, tenant, user, "test", false)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	agentKey := func(agentID string) string {
		t.Helper()
		key, _, err := ts.CreateAgentKey(ctx, r.a.TenantID, r.a.UserID, agentID, "test", r.a.UserID)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	tenantURL := mcpadapter.Prefix + r.a.TenantSlug
	agentURL := func(id string) string { return tenantURL + "/agents/" + id }

	const (
		prompt   = "docs_summarize"
		index    = "switchboard://mcp/docs/docs://pages/index"
		template = "switchboard://mcp/docs/docs://pages/{id}"
		page7    = "switchboard://mcp/docs/docs://pages/7"
	)
	owner := connect(userKey(r.a.TenantID, r.a.UserID), tenantURL)

	t.Run("owner lists them namespaced", func(t *testing.T) {
		got := listed(ctx, t, owner)
		for _, want := range []string{"prompt " + prompt, "resource " + index, "template " + template, "prompt notes_hello"} {
			if !slices.Contains(got, want) {
				t.Errorf("the owner's lists lack %q: %v", want, got)
			}
		}
		// A server that announced no resources has none to read by URI.
		if slices.Contains(got, "template switchboard://mcp/other/{+uri}") {
			t.Errorf("the owner's lists offer resources of a server without any: %v", got)
		}
	})
	t.Run("owner gets the prompt", func(t *testing.T) {
		req := mcpgo.GetPromptRequest{}
		req.Params.Name = prompt
		req.Params.Arguments = map[string]string{"topic": "billing"}
		res, err := owner.GetPrompt(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) != 2 {
			t.Fatalf("prompt messages = %+v", res.Messages)
		}
		if text, _ := res.Messages[0].Content.(mcpgo.TextContent); text.Text != "Summarize the docs on billing" {
			t.Errorf("prompt text = %+v", res.Messages[0].Content)
		}
		if e, _ := res.Messages[1].Content.(mcpgo.EmbeddedResource); e.Resource == nil || e.Resource.(mcpgo.TextResourceContents).URI != index {
			t.Errorf("embedded resource = %+v; want the hub's URI %s", res.Messages[1].Content, index)
		}
		if !docs.asked("prompts/get") {
			t.Error("the remote server was not asked for the prompt")
		}
	})
	t.Run("owner reads a listed resource", func(t *testing.T) {
		if diff := cmp.Diff("the index", read(ctx, t, owner, index)); diff != "" {
			t.Errorf("read %s (-want +got):\n%s", index, diff)
		}
	})
	t.Run("owner reads a tool's resource_link", func(t *testing.T) {
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "docs_find"
		res, err := owner.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatalf("docs_find = %+v, %v", res, err)
		}
		var link string
		for _, c := range res.Content {
			if l, ok := c.(mcpgo.ResourceLink); ok {
				link = l.URI
			}
		}
		if link != page7 {
			t.Fatalf("resource_link = %q; want %q in %+v", link, page7, res.Content)
		}
		if diff := cmp.Diff("page 7", read(ctx, t, owner, link)); diff != "" {
			t.Errorf("read the resource_link (-want +got):\n%s", diff)
		}
	})
	t.Run("agent with the server's tools sees them", func(t *testing.T) {
		c := connect(agentKey(withDocs.ID), agentURL(withDocs.ID))
		if got := listed(ctx, t, c); !slices.Contains(got, "prompt "+prompt) || !slices.Contains(got, "resource "+index) {
			t.Errorf("the agent's lists = %v; want the docs server's prompt and resource", got)
		}
		if diff := cmp.Diff("page 7", read(ctx, t, c, page7)); diff != "" {
			t.Errorf("read (-want +got):\n%s", diff)
		}
	})

	refused := []struct {
		name string
		key  string
		path string
	}{
		{"another member of the tenant", userKey(r.a.TenantID, member.ID), tenantURL},
		{"an agent without the server's tools", agentKey(withoutDocs.ID), agentURL(withoutDocs.ID)},
		{"another tenant", userKey(r.b.TenantID, r.b.UserID), mcpadapter.Prefix + r.b.TenantSlug},
	}
	for _, tc := range refused {
		t.Run(tc.name+" gets none of it", func(t *testing.T) {
			c := connect(tc.key, tc.path)
			for _, l := range listed(ctx, t, c) {
				if strings.Contains(l, "docs") || strings.Contains(l, "notes") {
					t.Errorf("listed %q", l)
				}
			}
			for _, uri := range []string{index, page7} {
				req := mcpgo.ReadResourceRequest{}
				req.Params.URI = uri
				if res, err := c.ReadResource(ctx, req); err == nil {
					t.Errorf("read %s = %+v; want it refused", uri, res)
				}
			}
			req := mcpgo.GetPromptRequest{}
			req.Params.Name = prompt
			req.Params.Arguments = map[string]string{"topic": "x"}
			if res, err := c.GetPrompt(ctx, req); err == nil {
				t.Errorf("get %s = %+v; want it refused", prompt, res)
			}
		})
	}
}

// TestRemotePromptsListChangedReachesClients: the remote server adds a prompt and says
// its prompts changed; the client at the tenant URL gets list_changed and lists the new
// prompt, namespaced.
func TestRemotePromptsListChangedReachesClients(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	r := newRig(t, db)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	adapter := mcpadapter.New(mcpadapter.Options{Router: r.router, Auth: ts, Remote: r.remote})
	r.conns.Subscribe(adapter.ConnectionChanged)
	hub := httptest.NewServer(adapter)
	t.Cleanup(func() { testwait.CloseServer(t, hub) })
	docs := newDocsServer(t)
	if _, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "docs", URL: docs.http.URL + "/mcp", Auth: remotemcp.AuthBearer, Token: "docs-secret"}); err != nil {
		t.Fatal(err)
	}
	key, _, err := ts.CreateKey(ctx, r.a.TenantID, r.a.UserID, "test", false)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 8)
	c := mcpClient(t, hub.URL+mcpadapter.Prefix+r.a.TenantSlug, key, true)
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		if n.Method == string(mcpgo.MethodNotificationPromptsListChanged) {
			select {
			case changed <- struct{}{}:
			default: // enough are noted; never hold the client's reader
			}
		}
	})
	if got := listed(ctx, t, c); slices.Contains(got, "prompt docs_outline") {
		t.Fatalf("listed before it exists: %v", got)
	}
	// The streams (the client's to the hub, the hub's to the server) open in the
	// background; a list_changed sent before reaches nobody, so each AddPrompt sends
	// another until one arrives.
	deadline := time.Now().Add(testwait.Timeout)
	for done := false; !done; {
		docs.mcp.AddPrompt(mcpgo.NewPrompt("outline", mcpgo.WithPromptDescription("Outline the docs.")),
			func(context.Context, mcpgo.GetPromptRequest) (*mcpgo.GetPromptResult, error) {
				return mcpgo.NewGetPromptResult("Outline", []mcpgo.PromptMessage{mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewTextContent("Outline the docs."))}), nil
			})
		select {
		case <-changed:
			done = true
		case <-time.After(time.Second):
			if time.Now().After(deadline) {
				t.Fatalf("no prompts list_changed reached the client in %s", testwait.Timeout)
			}
		}
	}
	testwait.Until(t, "docs_outline listed", func() bool { return slices.Contains(listed(ctx, t, c), "prompt docs_outline") })
}

// listed lists a client's prompts, resources and resource templates as "prompt NAME",
// "resource URI" and "template URI".
func listed(ctx context.Context, t *testing.T, c *client.Client) []string {
	t.Helper()
	var out []string
	ps, err := c.ListPrompts(ctx, mcpgo.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps.Prompts {
		out = append(out, "prompt "+p.Name)
	}
	rs, err := c.ListResources(ctx, mcpgo.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs.Resources {
		out = append(out, "resource "+r.URI)
	}
	tpls, err := c.ListResourceTemplates(ctx, mcpgo.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tpl := range tpls.ResourceTemplates {
		out = append(out, "template "+tpl.URITemplate.Raw())
	}
	return out
}

// read reads a resource through the hub and returns its text.
func read(ctx context.Context, t *testing.T, c *client.Client, uri string) string {
	t.Helper()
	req := mcpgo.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(ctx, req)
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s = %+v", uri, res.Contents)
	}
	tc, ok := res.Contents[0].(mcpgo.TextResourceContents)
	if !ok || tc.URI != uri {
		t.Fatalf("read %s = %+v; want text under the hub's URI", uri, res.Contents[0])
	}
	return tc.Text
}
