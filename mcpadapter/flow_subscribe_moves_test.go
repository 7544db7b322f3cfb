package mcpadapter

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/runs"
	"github.com/switchboard-hub/switchboard/sessions"
)

// TestFlowSubscriptionsMoveWithTheSession: a session that subscribed to flow
// instances on node A (resources/subscribe, and subscribe_flow) and unsubscribed from
// one, then moves to node B, which never held it, keeps following them there: node B
// restores the subscriptions with the session, and the session (its GET stream on node
// B, or a request's stream there) hears notifications/resources/updated when their
// state changes, and nothing of the instance it unsubscribed from.
func TestFlowSubscriptionsMoveWithTheSession(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		for _, version := range []string{mcp.ProtocolVersion20250618, mcp.ProtocolVersion20251125} {
			t.Run(version, func(t *testing.T) { flowSubscriptionsMove(t, db, version) })
		}
	})
}

func flowSubscriptionsMove(t *testing.T, db *gorm.DB, version string) {
	buses := nodeBuses(t, db)
	e := buildRunsEnv(t, db, nil, nil, true, buses[1])
	e.saveWorkflows(t, holdWorkflow)
	store := sessions.NewStore(db)
	a, b := e.node(t, store, mcptransport.FeedRelay(buses[0])), e.node(t, store, mcptransport.FeedRelay(buses[1]))
	nodeA, nodeB := e.adapters[1], e.adapters[2]
	t.Cleanup(runs.OnStateChange(buses[0], nodeA.RunChanged))
	t.Cleanup(runs.OnStateChange(buses[1], nodeB.RunChanged))
	var to atomic.Int32 // the node every request goes to
	lb := newBalancer(t, func(string) int { return int(to.Load()) }, a.URL, b.URL)

	tr, err := transport.NewStreamableHTTP(a.URL+"/mcp/"+e.ann.TenantSlug, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + keyAnn}),
		transport.WithHTTPBasicClient(&http.Client{Transport: lb}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	// What the session hears comes on its GET stream, or on the stream of a request
	// in flight: after the move both are node B's.
	heard := make(chan string, 64)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationResourceUpdated) {
			uri, _ := n.Params.AdditionalFields["uri"].(string)
			heard <- uri
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "flow-subscriptions-move", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	session := c.GetSessionId()

	subscribed, followed, dropped := flowStarted(t, c, "hold"), flowStarted(t, c, "hold"), flowStarted(t, c, "hold")
	for _, id := range []string{subscribed, dropped} {
		if err := c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: "switchboard://flows/" + id}}); err != nil {
			t.Fatalf("resources/subscribe %s: %v", id, err)
		}
	}
	if res := callWithin(t, c, "subscribe_flow", map[string]any{"instance_id": followed}); res.IsError {
		t.Fatalf("subscribe_flow = %s", text(res))
	}
	if err := c.Unsubscribe(ctx, mcp.UnsubscribeRequest{Params: mcp.UnsubscribeParams{URI: "switchboard://flows/" + dropped}}); err != nil {
		t.Fatalf("resources/unsubscribe: %v", err)
	}
	nodeB.mu.Lock()
	s := nodeB.scopes[scopeKey(e.ann, "")]
	nodeB.mu.Unlock()
	if s != nil && s.ep.Holds(session) {
		t.Fatal("node B holds the session before it moves there")
	}

	// The session moves to node B: its GET stream and its requests.
	to.Store(1)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.URL+"/mcp/"+e.ann.TenantSlug, nil)
	req.Header.Set("Authorization", "Bearer "+keyAnn)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", version)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream on node B: %d", resp.StatusCode)
	}
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var n struct {
				Method string `json:"method"`
				Params struct {
					URI string `json:"uri"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(data), &n) == nil && n.Method == string(mcp.MethodNotificationResourceUpdated) {
				heard <- n.Params.URI
			}
		}
	}()

	for _, id := range []string{dropped, subscribed, followed} {
		if r := callWithin(t, c, "cancel_flow", map[string]any{"instance_id": id}); r.IsError {
			t.Fatalf("cancel_flow = %s", text(r))
		}
	}
	want := map[string]bool{"switchboard://flows/" + subscribed: true, "switchboard://flows/" + followed: true}
	for len(want) > 0 {
		select {
		case uri := <-heard:
			if uri == "switchboard://flows/"+dropped {
				t.Errorf("node B told the session of %s, which it unsubscribed from", uri)
			}
			delete(want, uri)
		case <-ctx.Done():
			t.Fatalf("the session heard nothing of %v from node B", want)
		}
	}
	if n := len(lb.got(0, `"cancel_flow"`)); n != 0 {
		t.Errorf("node A got %d cancel_flow calls; the test wants them on node B", n)
	}
}
