package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
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

// sdkWatched is a remote MCP server of the official Go SDK with one resource,
// file:///watched.txt, that clients may subscribe to; it returns the server and the
// URIs its clients subscribed to.
func sdkWatched(t *testing.T) (*sdk.Server, string, chan string) {
	t.Helper()
	subscribed := make(chan string, 8)
	srv := sdk.NewServer(&sdk.Implementation{Name: "watched", Version: "1"}, &sdk.ServerOptions{
		SubscribeHandler: func(_ context.Context, req *sdk.SubscribeRequest) error {
			subscribed <- req.Params.URI
			return nil
		},
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	srv.AddResource(&sdk.Resource{URI: "file:///watched.txt", Name: "watched", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "v1"}}}, nil
		})
	h := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(func() { testwait.CloseServer(t, h) })
	return srv, h.URL, subscribed
}

// TestResourceSubscriptions: a client subscribed (resources/subscribe) to a remote
// server's resource hears notifications/resources/updated, with the hub's URI, when
// the server updates it (the hub subscribed on the server too), and a URI that is not
// one of the endpoint's is not found; one subscribed to the
// hub's own switchboard://connections hears of a change of the connections; after
// resources/unsubscribe it hears no more. On 2026-07-28 a subscriptions/listen stream
// that names the remote's resource hears of its updates.
func TestResourceSubscriptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.SQLite(t)
	r := newRig(t, db)
	ts := tenants.NewStore(db)
	t.Cleanup(ts.Close)
	up, upURL, subscribed := sdkWatched(t)
	if _, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: upURL}); err != nil {
		t.Fatal(err)
	}
	adapter := mcpadapter.New(mcpadapter.Options{Router: r.router, Auth: ts, Remote: r.remote})
	r.conns.Subscribe(adapter.ConnectionChanged)
	r.remote.OnResourceUpdated(adapter.ResourceUpdated)
	hub := httptest.NewServer(adapter)
	t.Cleanup(func() { testwait.CloseServer(t, hub) })
	key, _, err := ts.CreateKey(ctx, r.a.TenantID, r.a.UserID, "test", false)
	if err != nil {
		t.Fatal(err)
	}
	c := mcpClient(t, hub.URL+mcpadapter.Prefix+r.a.TenantSlug, key, true)
	updates := make(chan string, 16)
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		if n.Method == string(mcpgo.MethodNotificationResourceUpdated) {
			uri, _ := n.Params.AdditionalFields["uri"].(string)
			updates <- uri
		}
	})
	init, err := c.ListResources(ctx, mcpgo.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	hubURI := remotemcp.HubURI("up", "file:///watched.txt")
	found := false
	for _, res := range init.Resources {
		found = found || res.URI == hubURI
	}
	if !found {
		t.Fatalf("resources = %+v, want %s", init.Resources, hubURI)
	}
	subscribe := func(uri string) {
		t.Helper()
		req := mcpgo.SubscribeRequest{}
		req.Params.URI = uri
		if err := c.Subscribe(ctx, req); err != nil {
			t.Fatalf("resources/subscribe %s: %v", uri, err)
		}
	}
	// A resource that offers no updates here (not the endpoint's) is not found.
	for _, uri := range []string{"test://watched-resource", remotemcp.HubURI("elsewhere", "file:///watched.txt"), "switchboard://connections/con_other"} {
		req := mcpgo.SubscribeRequest{}
		req.Params.URI = uri
		if err := c.Subscribe(ctx, req); err == nil || !strings.Contains(err.Error(), "resource not found") {
			t.Errorf("resources/subscribe %s = %v, want resource not found", uri, err)
		}
	}
	subscribe(hubURI)
	if got := testwait.Recv(t, subscribed, "the hub's subscription at the remote server"); got != "file:///watched.txt" {
		t.Errorf("the hub subscribed to %q at the remote, want its own URI file:///watched.txt", got)
	}
	if err := up.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: "file:///watched.txt"}); err != nil {
		t.Fatal(err)
	}
	if got := testwait.Recv(t, updates, "notifications/resources/updated of the remote's resource"); got != hubURI {
		t.Errorf("updated %q, want the hub's URI %q", got, hubURI)
	}

	// The hub's own resource: a change of the connections.
	subscribe("switchboard://connections")
	more, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "more", URL: sdkAsker(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got := testwait.Recv(t, updates, "notifications/resources/updated of switchboard://connections"); got != "switchboard://connections" {
		t.Errorf("updated %q, want switchboard://connections", got)
	}

	// Unsubscribed: nothing more of the remote's resource.
	unsub := mcpgo.UnsubscribeRequest{}
	unsub.Params.URI = hubURI
	if err := c.Unsubscribe(ctx, unsub); err != nil {
		t.Fatal(err)
	}
	if err := up.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: "file:///watched.txt"}); err != nil {
		t.Fatal(err)
	}
	// The next update is the hub's own resource's: the remote's did not pass.
	if err := r.conns.Delete(ctx, r.a, more.Connection.ID); err != nil {
		t.Fatal(err)
	}
	if got := testwait.Recv(t, updates, "notifications/resources/updated after the connection's deletion"); got != "switchboard://connections" {
		t.Errorf("updated %q after resources/unsubscribe of it, want only switchboard://connections", got)
	}

	// 2026-07-28: the resources named in subscriptions/listen's filter, on its stream;
	// the acknowledgement names only those the endpoint offers updates of.
	tr, err := transport.NewStreamableHTTP(hub.URL+mcpadapter.Prefix+r.a.TenantSlug, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	if err != nil {
		t.Fatal(err)
	}
	mc := client.NewClient(tr)
	t.Cleanup(func() { _ = mc.Close() })
	if err := mc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	minit := mcpgo.InitializeRequest{}
	minit.Params.ClientInfo = mcpgo.Implementation{Name: "mcp-go", Version: "1.2.1"}
	minit.Params.ProtocolVersion = mcpgo.ProtocolVersion20260728
	if res, err := mc.Initialize(ctx, minit); err != nil || res.ProtocolVersion != mcpgo.ProtocolVersion20260728 {
		t.Fatalf("initialize on 2026-07-28: %+v, %v", res, err)
	}
	acked := make(chan []any, 1)
	modern := make(chan string, 16)
	mc.OnNotification(func(n mcpgo.JSONRPCNotification) {
		switch n.Method {
		case string(mcpgo.MethodNotificationSubscriptionsAcknowledged):
			f, _ := n.Params.AdditionalFields["notifications"].(map[string]any)
			uris, _ := f["resourceSubscriptions"].([]any)
			acked <- uris
		case string(mcpgo.MethodNotificationResourceUpdated):
			uri, _ := n.Params.AdditionalFields["uri"].(string)
			modern <- uri
		}
	})
	stop, err := mc.ListenAsync(ctx, mcpgo.SubscriptionFilter{ResourceSubscriptions: []string{hubURI, "test://watched-resource"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	if got := testwait.Recv(t, acked, "subscriptions/acknowledged"); len(got) != 1 || got[0] != hubURI {
		t.Errorf("acknowledged resource subscriptions %v, want only %s", got, hubURI)
	}
	if err := up.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: "file:///watched.txt"}); err != nil {
		t.Fatal(err)
	}
	if got := testwait.Recv(t, modern, "notifications/resources/updated on the listen stream"); got != hubURI {
		t.Errorf("updated %q on the listen stream, want %q", got, hubURI)
	}
}
