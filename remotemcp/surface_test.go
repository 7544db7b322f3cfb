package remotemcp_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	"github.com/switchboard-hub/switchboard/remotemcp"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestListChangedReachesTenantSessions runs the whole way: an MCP client at the
// tenant's MCP URL lists the remote server's tools, the remote server adds a tool and
// says list_changed, and the hub's client session gets list_changed in turn, lists the
// new tool and calls it. Another tenant's MCP URL never lists them.
func TestListChangedReachesTenantSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	r := newRig(t, db)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	adapter := mcpadapter.New(mcpadapter.Options{Router: r.router, Auth: ts})
	r.conns.Subscribe(adapter.ConnectionChanged)
	hub := httptest.NewServer(adapter)
	t.Cleanup(func() {
		hub.CloseClientConnections()
		hub.Close()
	})
	up := newMCPServer(t, "")
	if _, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: up.url()}); err != nil {
		t.Fatal(err)
	}

	connect := func(tenant switchboard.TenantID, user, slug string) (*client.Client, chan struct{}) {
		t.Helper()
		key, _, err := ts.CreateKey(ctx, tenant, user, "test", false)
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.NewStreamableHttpClient(hub.URL+mcpadapter.Prefix+slug,
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}), transport.WithContinuousListening())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		changed := make(chan struct{}, 8)
		c.OnNotification(func(n mcp.JSONRPCNotification) {
			if n.Method == string(mcp.MethodNotificationToolsListChanged) {
				changed <- struct{}{}
			}
		})
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		init := mcp.InitializeRequest{}
		init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
		init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatal(err)
		}
		return c, changed
	}
	names := func(c *client.Client) []string {
		t.Helper()
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		slices.Sort(out)
		return out
	}
	ca, changed := connect(r.a.TenantID, r.a.UserID, r.a.TenantSlug)
	cb, _ := connect(r.b.TenantID, r.b.UserID, r.b.TenantSlug)
	if diff := cmp.Diff([]string{"up_shout"}, names(ca)); diff != "" {
		t.Errorf("tenant tools (-want +got):\n%s", diff)
	}
	if got := names(cb); len(got) != 0 {
		t.Errorf("another tenant's tools = %v", got)
	}
	time.Sleep(200 * time.Millisecond) // let the client's GET stream open

	up.mcp.AddTool(mcp.NewTool("whisper", mcp.WithDescription("Whisper."), mcp.WithString("word", mcp.Required())),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("psst"), nil
		})
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("the tenant's MCP session got no list_changed")
	}
	if diff := cmp.Diff([]string{"up_shout", "up_whisper"}, names(ca)); diff != "" {
		t.Errorf("tenant tools after list_changed (-want +got):\n%s", diff)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "up_whisper"
	req.Params.Arguments = map[string]any{"word": "x"}
	res, err := ca.CallTool(ctx, req)
	if err != nil || res.IsError || res.Content[0].(mcp.TextContent).Text != "psst" {
		t.Fatalf("call through the hub = %+v, %v", res, err)
	}
	if got := names(cb); len(got) != 0 {
		t.Errorf("another tenant's tools after the change = %v", got)
	}
}
