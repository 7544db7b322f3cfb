package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/tenants"
)

// hubClient serves the rig's router at an MCP URL and returns an initialized MCP
// client of tenant a's owner there, with a standalone GET stream when listen is set.
func hubClient(t *testing.T, r *rig, ts *tenants.Store, listen bool, opts ...client.ClientOption) *client.Client {
	t.Helper()
	ctx := context.Background()
	adapter := mcpadapter.New(mcpadapter.Options{Router: r.router, Auth: ts})
	r.conns.Subscribe(adapter.ConnectionChanged)
	hub := httptest.NewServer(adapter)
	t.Cleanup(func() {
		testwait.CloseServer(t, hub)
	})
	key, _, err := ts.CreateKey(ctx, r.a.TenantID, r.a.UserID, "test", false)
	if err != nil {
		t.Fatal(err)
	}
	return mcpClient(t, hub.URL+mcpadapter.Prefix+r.a.TenantSlug, key, listen, opts...)
}

// mcpClient returns an initialized MCP client at url with the bearer key, with a
// standalone GET stream when listen is set.
func mcpClient(t *testing.T, url, key string, listen bool, opts ...client.ClientOption) *client.Client {
	t.Helper()
	ctx := context.Background()
	topts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key})}
	if listen {
		topts = append(topts, transport.WithContinuousListening())
	}
	tr, err := transport.NewStreamableHTTP(url, topts...)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, opts...)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcpgo.InitializeRequest{}
	init.Params.ClientInfo = mcpgo.Implementation{Name: "test", Version: "1"}
	init.Params.ProtocolVersion = mcpgo.LATEST_LEGACY_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

// sdkCounter is a remote MCP server of the official Go SDK whose tool count sends n
// progress notifications (0 to n-1) as fast as it can, on the protocol version its client asks
// for (the SDK keeps a call's notifications on the call's own stream in both eras).
func sdkCounter(t *testing.T, n int) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "counter", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "count", Description: "Count with progress.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			token := req.Params.GetProgressToken()
			for i := 1; i <= n; i++ {
				if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(i - 1), Total: float64(n), Message: fmt.Sprintf("step %d", i)}); err != nil {
					return nil, err
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "counted"}}}, nil
		})
	h := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(func() {
		testwait.CloseServer(t, h)
	})
	return h.URL
}

// TestEveryRemoteProgressReachesTheCaller sends many progress notifications from a
// remote tool as fast as it can and counts at the hub's client that every one arrived
// under the caller's token, on the call's own stream: each before the call's result
// and in order, from one call after another and from several calls at once, with and
// without a GET stream held open by the client. The hub's queue toward its client held
// 100 notifications and refused more; the GET stream mcp-go's WithContinuousListening
// opened made mcp-go servers send a call's progress there, after its result; and the
// hub's own mcp-go server sent a call's notifications on whichever of the session's
// streams took them first, its client's GET stream or a sibling call's.
func TestEveryRemoteProgressReachesTheCaller(t *testing.T) {
	t.Parallel()
	const perCall = 300
	for _, tc := range []struct {
		name       string
		calls      int
		concurrent bool
		listen     bool // the client holds a GET stream open
	}{
		{name: "one call after another", calls: 3},
		{name: "calls at once", calls: 4, concurrent: true},
		{name: "one call after another, GET stream open", calls: 3, listen: true},
		{name: "calls at once, GET stream open", calls: 4, concurrent: true, listen: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := testdb.SQLite(t)
			r := newRig(t, db)
			ts := tenants.NewStore(db)
			t.Cleanup(ts.Close)
			if _, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: sdkCounter(t, perCall)}); err != nil {
				t.Fatal(err)
			}
			c := hubClient(t, r, ts, tc.listen)
			var mu sync.Mutex
			got := map[string][]float64{}
			c.OnNotification(func(n mcpgo.JSONRPCNotification) {
				if n.Method != string(mcpgo.MethodNotificationProgress) {
					return
				}
				token, _ := n.Params.AdditionalFields["progressToken"].(string)
				p, _ := n.Params.AdditionalFields["progress"].(float64)
				mu.Lock()
				got[token] = append(got[token], p)
				mu.Unlock()
			})
			call := func(i int) error {
				token := fmt.Sprintf("call-%d", i)
				req := mcpgo.CallToolRequest{}
				req.Params.Name = "up_count"
				req.Params.Meta = &mcpgo.Meta{ProgressToken: token}
				res, err := c.CallTool(ctx, req)
				if err != nil || res.IsError {
					return fmt.Errorf("%s: %+v, %v", token, res, err)
				}
				mu.Lock() // what arrived before the result
				defer mu.Unlock()
				seen := got[token]
				if len(seen) != perCall {
					return fmt.Errorf("%s: %d progress notifications reached the client before the result, want %d", token, len(seen), perCall)
				}
				for j, p := range seen { // from 0, as the remote sent them
					if p != float64(j) {
						return fmt.Errorf("%s: progress #%d is %v, want %d (out of order or changed)", token, j+1, p, j)
					}
				}
				return nil
			}
			errs := make(chan error, tc.calls)
			var wg sync.WaitGroup
			for i := range tc.calls {
				if !tc.concurrent {
					errs <- call(i)
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- call(i)
				}()
			}
			testwait.Wait(t, "the calls to answer", wg.Wait)
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}
