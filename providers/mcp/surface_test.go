package mcp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
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
		testwait.CloseServer(t, hub)
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
		c.OnNotification(func(n mcpgo.JSONRPCNotification) {
			if n.Method == string(mcpgo.MethodNotificationToolsListChanged) {
				select {
				case changed <- struct{}{}:
				default: // enough are noted; never hold the client's reader
				}
			}
		})
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		init := mcpgo.InitializeRequest{}
		init.Params.ClientInfo = mcpgo.Implementation{Name: "test", Version: "1"}
		init.Params.ProtocolVersion = mcpgo.LATEST_LEGACY_PROTOCOL_VERSION
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatal(err)
		}
		return c, changed
	}
	names := func(c *client.Client) []string {
		t.Helper()
		res, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
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
	// announce adds a tool to the remote server until the tenant's session hears of
	// it. The client's GET stream (and the hub's to the remote) open in the background,
	// and a list_changed sent before they are open reaches nobody: each AddTool sends
	// another. (Before, a fixed 200 ms pause stood for the streams opening.)
	announce := func(tool mcpgo.Tool, handler server.ToolHandlerFunc) {
		t.Helper()
		drain(changed)
		deadline := time.Now().Add(testwait.Timeout)
		for {
			up.mcp.AddTool(tool, handler)
			select {
			case <-changed:
				return
			case <-time.After(time.Second):
			}
			if time.Now().After(deadline) {
				t.Fatalf("the tenant's MCP session got no list_changed for %s in %s", tool.Name, testwait.Timeout)
			}
		}
	}
	announce(mcpgo.NewTool("whisper", mcpgo.WithDescription("Whisper."), mcpgo.WithString("word", mcpgo.Required())),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("psst"), nil
		})
	if diff := cmp.Diff([]string{"up_shout", "up_whisper"}, names(ca)); diff != "" {
		t.Errorf("tenant tools after list_changed (-want +got):\n%s", diff)
	}
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "up_whisper"
	req.Params.Arguments = map[string]any{"word": "x"}
	res, err := ca.CallTool(ctx, req)
	if err != nil || res.IsError || res.Content[0].(mcpgo.TextContent).Text != "psst" {
		t.Fatalf("call through the hub = %+v, %v", res, err)
	}
	// The remote's tool error reaches the client as the remote gave it, not rewritten.
	req.Params.Name = "up_shout"
	req.Params.Arguments = map[string]any{"word": "fail"}
	res, err = ca.CallTool(ctx, req)
	if err != nil || !res.IsError || len(res.Content) != 1 || res.Content[0].(mcpgo.TextContent).Text != "cannot shout fail" {
		t.Errorf("a remote tool error through the hub = %+v, %v; want isError with the remote's text only", res, err)
	}

	// The remote's progress reaches the calling client when it asked for progress.
	progress := make(chan map[string]any, 8)
	ca.OnNotification(func(n mcpgo.JSONRPCNotification) {
		if n.Method == string(mcpgo.MethodNotificationProgress) {
			progress <- n.Params.AdditionalFields
		}
	})
	tokens := make(chan mcpgo.ProgressToken, 1)
	announce(mcpgo.NewTool("count", mcpgo.WithDescription("Count to two.")),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			var remoteToken mcpgo.ProgressToken
			if req.Params.Meta != nil {
				remoteToken = req.Params.Meta.ProgressToken
			}
			tokens <- remoteToken
			for i := 1; i <= 2; i++ {
				_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
					map[string]any{"progressToken": remoteToken, "progress": i, "total": 2, "message": fmt.Sprintf("step %d", i)})
			}
			return mcpgo.NewToolResultText("two"), nil
		})
	// A list_changed of an earlier AddTool of whisper may be the one announce took.
	testwait.Until(t, "up_count in the tenant's tools", func() bool { return slices.Contains(names(ca), "up_count") })
	req = mcpgo.CallToolRequest{}
	req.Params.Name = "up_count"
	req.Params.Meta = &mcpgo.Meta{ProgressToken: "client-token"}
	if res, err := ca.CallTool(ctx, req); err != nil || res.IsError {
		t.Fatalf("up_count through the hub = %+v, %v", res, err)
	}
	if token := testwait.Recv(t, tokens, "the remote server to be called"); token == nil {
		t.Error("the hub asked the remote server for no progress")
	}
	// The remote's progress arrives under the client's token with the remote's message.
	// (One of the two may reach the client late or not at all: the hub's mcp-go server
	// can end the call's stream before its last notification, so one is what is certain.)
	select {
	case p := <-progress:
		if m, _ := p["message"].(string); p["progressToken"] != "client-token" || !strings.HasPrefix(m, "step ") {
			t.Errorf("progress %v: want the client's token and the remote's message", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no progress notification reached the client")
	}
	if got := names(cb); len(got) != 0 {
		t.Errorf("another tenant's tools after the change = %v", got)
	}
}
