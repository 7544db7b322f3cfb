package mcpadapter

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/internal/notesfake"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/mcptransport"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/sessions"
)

// balancer is a load balancer without stickiness in front of several nodes: pick
// chooses each request's node from its body (a GET's body is empty).
type balancer struct {
	nodes []*url.URL
	pick  func(body string) int

	mu   sync.Mutex
	sent [][]string // the bodies each node got
}

func newBalancer(t *testing.T, pick func(body string) int, nodes ...string) *balancer {
	t.Helper()
	b := &balancer{pick: pick, sent: make([][]string, len(nodes))}
	for _, n := range nodes {
		u, err := url.Parse(n)
		if err != nil {
			t.Fatal(err)
		}
		b.nodes = append(b.nodes, u)
	}
	return b
}

func (b *balancer) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		_ = r.Body.Close()
	}
	i := b.pick(string(body))
	b.mu.Lock()
	b.sent[i] = append(b.sent[i], string(body))
	b.mu.Unlock()
	out := r.Clone(r.Context())
	out.URL.Scheme, out.URL.Host, out.Host = b.nodes[i].Scheme, b.nodes[i].Host, ""
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return http.DefaultTransport.RoundTrip(out)
}

// got returns the bodies node i got that contain s.
func (b *balancer) got(i int, s string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, body := range b.sent[i] {
		if strings.Contains(body, s) {
			out = append(out, body)
		}
	}
	return out
}

// isAnswer reports whether a posted body answers a server-to-client request.
func isAnswer(body string) bool {
	return strings.Contains(body, `"result"`) && !strings.Contains(body, `"method"`)
}

// balancedClient is a client of the tenant URL through the balancer, declaring
// elicitation (answered by el); it also collects the log messages it receives.
func balancedClient(t *testing.T, b *balancer, path, key string, el *elicitor, logs chan<- string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(b.nodes[0].String()+path, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}),
		transport.WithHTTPBasicClient(&http.Client{Transport: b}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithElicitationHandler(el))
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/message" && logs != nil {
			select {
			case logs <- string(n.Params.AdditionalFields["level"].(string)):
			default:
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "nodes-test", Version: "1"}
	init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{Form: &struct{}{}}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// callWithin calls a tool, failing the test instead of hanging when no answer comes.
func callWithin(t *testing.T, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func TestSessionContinuesOnAnotherNode(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmDestructive)
		a, b, _ := twoNodes(t, e, db)
		// initialize and logging/setLevel reach node A; everything else node B.
		lb := newBalancer(t, func(body string) int {
			if strings.Contains(body, `"initialize"`) || strings.Contains(body, `"logging/setLevel"`) {
				return 0
			}
			return 1
		}, a.URL, b.URL)
		el := &elicitor{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"confirm": true}}
		logs := make(chan string, 16)
		c := balancedClient(t, lb, "/mcp/"+e.ann.TenantSlug, keyAnn, el, logs)
		if err := c.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
			t.Fatalf("set level: %v", err)
		}
		id := e.up.Put("precious")
		res := callWithin(t, c, "notes_delete_note", map[string]any{"id": id})
		if res.IsError || e.up.Has(id) {
			t.Fatalf("delete on node B: isError %v %q, note still there %v", res.IsError, text(res), e.up.Has(id))
		}
		if asked := el.asked(); len(asked) != 1 {
			t.Errorf("node B asked the person %d times, want once: it must know the client can answer elicitations", len(asked))
		}
		if n := len(lb.got(1, `"notes_delete_note"`)); n != 1 {
			t.Fatalf("node B got %d calls, want 1", n)
		}
		select {
		case level := <-logs:
			if level != "info" && level != "debug" {
				t.Errorf("log message at %s", level)
			}
		default:
			t.Errorf("no log message from node B, though the client set the level to debug on node A")
		}
	})
}

func TestElicitationAnswerReachesTheNodeWhereTheCallWaits(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		e.policy.set(e.ann, router.ConfirmDestructive)
		a, b, _ := twoNodes(t, e, db)
		// The person's answer reaches node B; the call waits on node A.
		lb := newBalancer(t, func(body string) int {
			if isAnswer(body) {
				return 1
			}
			return 0
		}, a.URL, b.URL)
		el := &elicitor{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"confirm": true}}
		c := balancedClient(t, lb, "/mcp/"+e.ann.TenantSlug, keyAnn, el, nil)
		id := e.up.Put("precious")
		res := callWithin(t, c, "notes_delete_note", map[string]any{"id": id})
		var out notesfake.Deleted
		structured(t, res, &out)
		if res.IsError || !out.Deleted || e.up.Has(id) {
			t.Errorf("delete confirmed through node B: isError %v %q, note still there %v", res.IsError, text(res), e.up.Has(id))
		}
		if n := len(lb.got(1, `"action":"accept"`)); n != 1 {
			t.Errorf("node B got %d answers, want 1", n)
		}
	})
}

func TestCancellationReachesTheNodeRunningTheCall(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		t.Cleanup(e.up.Release)
		a, b, _ := twoNodes(t, e, db)
		path := "/mcp/" + e.ann.TenantSlug
		status, session, body := mcpRequestAt(t, a.URL+path, keyAnn, "", initBody)
		if status != http.StatusOK || session == "" {
			t.Fatalf("initialize on A: %d %s", status, body)
		}
		done := make(chan string, 1)
		go func() {
			_, _, body := mcpRequestAt(t, a.URL+path, keyAnn, session, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"notes_wait","arguments":{}}}`)
			done <- body
		}()
		testwait.Recv(t, e.up.Waiting(), "the call to reach the upstream") // the call runs on A, held by the upstream
		status, _, body = mcpRequestAt(t, b.URL+path, keyAnn, session, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"the user stopped it"}}`)
		if status != http.StatusAccepted {
			t.Fatalf("cancel on B: %d %s", status, body)
		}
		select {
		case body := <-done:
			if strings.Contains(body, `"waited"`) {
				t.Errorf("the call ran to its end: %s", body)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the call on node A was not cancelled by notifications/cancelled posted to node B")
		}
	})
}

func TestDeleteOnOneNodeEndsTheSessionEverywhere(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		e := newRunsEnv(t, db)
		a, b, buses := twoNodes(t, e, db)
		path := "/mcp/" + e.ann.TenantSlug
		_, session, _ := mcpRequestAt(t, a.URL+path, keyAnn, "", initBody)
		if status, _, body := mcpRequestAt(t, b.URL+path, keyAnn, session, listBody); status != http.StatusOK {
			t.Fatalf("tools/list on B: %d %s", status, body)
		}
		ended := taken(buses[1], mcptransport.KindSessionEnded)
		req, _ := http.NewRequest(http.MethodDelete, a.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+keyAnn)
		req.Header.Set("Mcp-Session-Id", session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("DELETE on A: %d", resp.StatusCode)
		}
		select {
		case <-ended:
		case <-time.After(30 * time.Second):
			t.Fatal("node B never heard that the session ended")
		}
		for name, node := range map[string]string{"A": a.URL, "B": b.URL} {
			if status, _, body := mcpRequestAt(t, node+path, keyAnn, session, listBody); status != http.StatusNotFound {
				t.Errorf("node %s after DELETE: %d %s, want 404", name, status, body)
			}
		}
	})
}

// mcpRequestAt posts a raw MCP message to a full URL.
func mcpRequestAt(t *testing.T, u, key, session, body string) (int, string, string) {
	t.Helper()
	base, path, _ := strings.Cut(strings.TrimPrefix(u, "http://"), "/")
	return mcpRequest(t, "http://"+base, http.MethodPost, "/"+path, key, session, body)
}

// twoNodes starts two nodes on db's session records, relaying over the change feed: one
// in-process bus on SQLite, a LISTEN/NOTIFY bus per node on PostgreSQL. It returns each
// node's server and bus.
func twoNodes(t *testing.T, e *runsEnv, db *gorm.DB) (a, b *httptest.Server, buses [2]events.Bus) {
	t.Helper()
	buses = nodeBuses(t, db)
	store := sessions.NewStore(db)
	return e.node(t, store, mcptransport.FeedRelay(buses[0])), e.node(t, store, mcptransport.FeedRelay(buses[1])), buses
}

// nodeBuses returns the change feeds of two nodes on db: one in-process bus on SQLite,
// a LISTEN/NOTIFY bus per node on PostgreSQL.
func nodeBuses(t *testing.T, db *gorm.DB) (buses [2]events.Bus) {
	t.Helper()
	if db.Dialector.Name() == "postgres" {
		sqlDB, err := db.DB()
		if err != nil {
			t.Fatal(err)
		}
		for i := range buses {
			bus, closeBus, err := events.Open(context.Background(), "postgres", sqlDB, testdb.DSN(t, db), "", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(closeBus)
			buses[i] = bus
		}
	} else {
		local := events.NewLocal("")
		buses = [2]events.Bus{local, local}
	}
	return buses
}

// taken returns a channel that receives once bus has delivered an event of kind to the
// subscribers before this one (the nodes' adapters, which subscribed first).
func taken(bus events.Bus, kind events.Kind) <-chan struct{} {
	ch := make(chan struct{}, 1)
	bus.Subscribe(func(e events.Event) {
		if e.Kind == kind {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	})
	return ch
}
