package mcpadapter

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/sessions"
)

// updates collects the URIs of the notifications/resources/updated a client receives.
type updates struct {
	mu   sync.Mutex
	uris []string
}

func (u *updates) seen(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, x := range u.uris {
		if x == uri {
			n++
		}
	}
	return n
}

// waitFor waits for a notification of uri.
func (u *updates) waitFor(t *testing.T, uri, what string) {
	t.Helper()
	testwait.Until(t, "notifications/resources/updated for "+uri+" ("+what+")", func() bool { return u.seen(uri) > 0 })
}

// listeningClient is a client through the balancer that keeps a GET stream open
// (where mcp-go sends a session's notifications) and collects resources/updated.
func listeningClient(t *testing.T, b *balancer, path, key, version string) (*client.Client, *updates) {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(b.nodes[0].String()+path, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}),
		transport.WithHTTPBasicClient(&http.Client{Transport: b}), transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	u := &updates{}
	c := client.NewClient(tr)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != string(mcp.MethodNotificationResourceUpdated) {
			return
		}
		uri, _ := n.Params.AdditionalFields["uri"].(string)
		u.mu.Lock()
		u.uris = append(u.uris, uri)
		u.mu.Unlock()
	})
	// The GET stream lives as long as the context Start is given.
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "flow-subscribe-test", Version: "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, u
}

// flowStarted runs run_flow_async__<name> and answers the instance_id.
func flowStarted(t *testing.T, c *client.Client, name string) string {
	t.Helper()
	res := callWithin(t, c, "run_flow_async__"+name, map[string]any{})
	var started struct {
		InstanceID string `json:"instance_id"`
	}
	structured(t, res, &started)
	if res.IsError || started.InstanceID == "" {
		t.Fatalf("run_flow_async__%s = %s", name, text(res))
	}
	return started.InstanceID
}

// TestSubscribeFlowAcrossNodes: a session whose GET stream is on node A follows flow
// instances that run on node B's change feed, subscribed both ways (resources/subscribe
// and the subscribe_flow tool), each request landing on node B: it hears
// notifications/resources/updated for every change of their state (canceled,
// completed), reads the instance's resource, and hears nothing more of one it
// unsubscribed from. Another user of the tenant and another tenant's user may not
// subscribe to the instance, and are told the same as for a missing one.
func TestSubscribeFlowAcrossNodes(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		for _, version := range []string{mcp.ProtocolVersion20250618, mcp.ProtocolVersion20251125} {
			t.Run(version, func(t *testing.T) { subscribeFlowAcrossNodes(t, db, version) })
		}
	})
}

func subscribeFlowAcrossNodes(t *testing.T, db *gorm.DB, version string) {
	buses := nodeBuses(t, db)
	// Runs store their changes on node B's feed.
	e := buildRunsEnv(t, db, nil, nil, true, buses[1])
	e.saveWorkflows(t, holdWorkflow)
	store := sessions.NewStore(db)
	a, b := e.node(t, store, mcptransport.FeedRelay(buses[0])), e.node(t, store, mcptransport.FeedRelay(buses[1]))
	nodeA, nodeB := e.adapters[1], e.adapters[2]
	t.Cleanup(runs.OnStateChange(buses[0], nodeA.RunChanged))
	t.Cleanup(runs.OnStateChange(buses[1], nodeB.RunChanged))
	// initialize and the GET stream reach node A; every other request node B.
	lb := newBalancer(t, func(body string) int {
		if body == "" || strings.Contains(body, `"initialize"`) {
			return 0
		}
		return 1
	}, a.URL, b.URL)
	ann, got := listeningClient(t, lb, "/mcp/"+e.ann.TenantSlug, keyAnn, version)
	testwait.Until(t, "the GET stream to open on node A", func() bool {
		nodeA.mu.Lock()
		s := nodeA.scopes[scopeKey(e.ann, "")]
		nodeA.mu.Unlock()
		return s != nil && s.inFlight.Load() > 0
	})
	canceled, completed, dropped := flowStarted(t, ann, "hold"), flowStarted(t, ann, "hold"), flowStarted(t, ann, "hold")
	ctx := context.Background()
	for _, id := range []string{canceled, dropped} {
		if err := ann.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: "switchboard://flows/" + id}}); err != nil {
			t.Fatalf("resources/subscribe %s: %v", id, err)
		}
	}
	res := callWithin(t, ann, "subscribe_flow", map[string]any{"instance_id": completed})
	var sub struct {
		URI        string `json:"uri"`
		Subscribed bool   `json:"subscribed"`
		Status     struct {
			InstanceID string `json:"instance_id"`
			Name       string `json:"name"`
			State      string `json:"state"`
		} `json:"status"`
	}
	structured(t, res, &sub)
	if res.IsError || !sub.Subscribed || sub.URI != "switchboard://flows/"+completed || sub.Status.InstanceID != completed || sub.Status.Name != "hold" || sub.Status.State != "working" {
		t.Fatalf("subscribe_flow = %s", text(res))
	}
	if n := len(lb.got(0, `"resources/subscribe"`)) + len(lb.got(0, `"subscribe_flow"`)); n != 0 {
		t.Fatalf("node A got %d subscriptions; the test wants them all on node B", n)
	}
	if err := ann.Unsubscribe(ctx, mcp.UnsubscribeRequest{Params: mcp.UnsubscribeParams{URI: "switchboard://flows/" + dropped}}); err != nil {
		t.Fatalf("resources/unsubscribe: %v", err)
	}

	// Others are refused as for an instance that does not exist.
	missing := "run_" + strings.Repeat("0", len(canceled)-len("run_"))
	for _, who := range []struct {
		p   switchboard.Principal
		key string
	}{{e.bob, keyBob}, {e.bea, keyBea}} {
		c, _ := listeningClient(t, newBalancer(t, func(string) int { return 0 }, a.URL), "/mcp/"+who.p.TenantSlug, who.key, version)
		theirs := c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: "switchboard://flows/" + canceled}})
		none := c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: "switchboard://flows/" + missing}})
		if theirs == nil || none == nil || strings.ReplaceAll(theirs.Error(), canceled, missing) != none.Error() {
			t.Errorf("%s subscribing to ann's instance: %v; to a missing one: %v; want the same refusal", who.key, theirs, none)
		}
		r1 := callWithin(t, c, "subscribe_flow", map[string]any{"instance_id": canceled})
		r2 := callWithin(t, c, "subscribe_flow", map[string]any{"instance_id": missing})
		if !r1.IsError || strings.ReplaceAll(text(r1), canceled, missing) != text(r2) {
			t.Errorf("%s subscribe_flow of ann's instance = %q; of a missing one %q; want the same refusal", who.key, text(r1), text(r2))
		}
		if _, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "switchboard://flows/" + canceled}}); err == nil {
			t.Errorf("%s read ann's flow instance", who.key)
		}
	}

	// The unsubscribed instance changes first: nothing reaches the session for it,
	// while the changes of the others that follow on the same feed do.
	for _, id := range []string{dropped, canceled} {
		if r := callWithin(t, ann, "cancel_flow", map[string]any{"instance_id": id, "reason": "changed my mind"}); r.IsError {
			t.Fatalf("cancel_flow = %s", text(r))
		}
	}
	got.waitFor(t, "switchboard://flows/"+canceled, "the instance was canceled")
	e.up.Release()
	got.waitFor(t, "switchboard://flows/"+completed, "the instance completed")
	if n := got.seen("switchboard://flows/" + dropped); n != 0 {
		t.Errorf("%d notifications for an instance the session unsubscribed from", n)
	}
	rr, err := ann.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "switchboard://flows/" + completed}})
	if err != nil || len(rr.Contents) != 1 {
		t.Fatalf("read the instance: %v", err)
	}
	var read struct {
		Status struct {
			InstanceID string `json:"instance_id"`
			State      string `json:"state"`
		} `json:"status"`
	}
	if tc, ok := rr.Contents[0].(mcp.TextResourceContents); !ok || json.Unmarshal([]byte(tc.Text), &read) != nil || read.Status.State != "completed" || read.Status.InstanceID != completed {
		t.Errorf("the instance's resource = %+v", rr.Contents[0])
	}
}
