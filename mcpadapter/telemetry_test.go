package mcpadapter

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/telemetry/telemetrytest"
)

// tracedEnv is an env whose adapter, router and upstream client record spans (and
// metrics) with tel, served behind tel's HTTP handler as serve does.
func tracedEnv(t *testing.T, tel *telemetry.Telemetry) (*env, string) {
	t.Helper()
	e := newEnvWith(t, func(o *Options) { o.Telemetry = tel }, func(o *router.Options) {
		o.Telemetry = tel
		o.Transports = &providers.Transports{Wrap: tel.UpstreamTransport}
	})
	srv := httptest.NewServer(tel.Handler(e.adapter))
	t.Cleanup(srv.Close)
	return e, srv.URL
}

// connect starts an initialized client of url for the key, on a protocol version
// with sessions.
func connect(t *testing.T, url, key string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-06-18"
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestToolCallContinuesTheCallersTrace sends a tools/call with a traceparent in its
// _meta and checks the spans: the call's span continues the caller's trace (linked to
// the HTTP request's span), the router's is its child, the upstream request's is the
// router's child, and the upstream received the trace in its traceparent header.
func TestToolCallContinuesTheCallersTrace(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tel := telemetry.New(nil, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	e, url := tracedEnv(t, tel)
	c := connect(t, url+"/mcp/acme", "key-alice")

	const traceID, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req := mcp.CallToolRequest{}
	req.Params.Name = "notes_create_note"
	req.Params.Arguments = map[string]any{"text": "hi"}
	req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-" + traceID + "-" + callerSpan + "-01"}}
	res, err := c.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	upstreamReq := testwait.Recv(t, e.seen, "the upstream to receive the call")

	spans := map[string]sdktrace.ReadOnlySpan{}
	var httpSpans []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.SpanKind() {
		case trace.SpanKindServer:
			if s.Name() != "tools/call notes_create_note" {
				httpSpans = append(httpSpans, s)
				continue
			}
		}
		spans[s.Name()] = s
	}
	toolSpan, ok := spans["tools/call notes_create_note"]
	if !ok {
		t.Fatalf("no tools/call span among %v", names(rec.Ended()))
	}
	if got := toolSpan.Parent(); got.TraceID().String() != traceID || got.SpanID().String() != callerSpan || !got.IsRemote() {
		t.Errorf("tools/call parent = %s/%s remote=%t, want the caller's %s/%s", got.TraceID(), got.SpanID(), got.IsRemote(), traceID, callerSpan)
	}
	if diff := cmp.Diff(map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "notes_create_note", "gen_ai.operation.name": "execute_tool",
	}, attrs(toolSpan, "mcp.method.name", "gen_ai.tool.name", "gen_ai.operation.name")); diff != "" {
		t.Errorf("tools/call attributes (-want +got):\n%s", diff)
	}
	if sid := attrs(toolSpan, "mcp.session.id")["mcp.session.id"]; sid == "" || telemetry.HasSecret(sid) {
		t.Errorf("tools/call span's mcp.session.id = %q, want the session's digest, never its id", sid)
	}
	// The HTTP request that carried the call has a span of its own, linked.
	linked := false
	for _, l := range toolSpan.Links() {
		for _, h := range httpSpans {
			if l.SpanContext.SpanID() == h.SpanContext().SpanID() {
				linked = true
			}
		}
	}
	if !linked {
		t.Errorf("tools/call span links %v, want the HTTP request's span among %v", toolSpan.Links(), names(httpSpans))
	}

	routerSpan, ok := spans["router.execute"]
	if !ok {
		t.Fatalf("no router span among %v", names(rec.Ended()))
	}
	if routerSpan.Parent().SpanID() != toolSpan.SpanContext().SpanID() || routerSpan.SpanContext().TraceID().String() != traceID {
		t.Errorf("router span's parent %s, want the tools/call span %s", routerSpan.Parent().SpanID(), toolSpan.SpanContext().SpanID())
	}
	if diff := cmp.Diff(map[string]string{"gen_ai.tool.name": "notes_create_note", "switchboard.connection.id": "con_a", "switchboard.tenant.id": "ten_a"},
		attrs(routerSpan, "gen_ai.tool.name", "switchboard.connection.id", "switchboard.tenant.id")); diff != "" {
		t.Errorf("router attributes (-want +got):\n%s", diff)
	}

	upSpan, ok := spans["HTTP POST notes"]
	if !ok {
		t.Fatalf("no upstream span among %v", names(rec.Ended()))
	}
	if upSpan.Parent().SpanID() != routerSpan.SpanContext().SpanID() || upSpan.SpanKind() != trace.SpanKindClient {
		t.Errorf("upstream span's parent %s kind %s, want a client span under the router's %s", upSpan.Parent().SpanID(), upSpan.SpanKind(), routerSpan.SpanContext().SpanID())
	}
	if got := attrs(upSpan, "http.response.status_code")["http.response.status_code"]; got != "201" {
		t.Errorf("upstream span status code %q, want 201", got)
	}
	wantHeader := "00-" + traceID + "-" + upSpan.SpanContext().SpanID().String() + "-01"
	if got := upstreamReq.Header.Get("Traceparent"); got != wantHeader {
		t.Errorf("upstream got traceparent %q, want %q", got, wantHeader)
	}
}

// TestToolCallWithoutMetaParentsOnTheHTTPSpan: without _meta, the call's span is a
// child of the HTTP request's span, which continues the traceparent header.
func TestToolCallWithoutMetaParentsOnTheHTTPSpan(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tel := telemetry.New(nil, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	e, url := tracedEnv(t, tel)
	const traceID = "0af7651916cd43dd8448eb211c80319c"
	c, err := client.NewStreamableHttpClient(url+"/mcp/acme", transport.WithHTTPHeaders(map[string]string{
		"Authorization": "Bearer key-alice", "Traceparent": "00-" + traceID + "-b7ad6b7169203331-01"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(context.Background(), init); err != nil {
		t.Fatal(err)
	}
	if res := call(t, c, "notes_create_note", map[string]any{"text": "hi"}); res.IsError {
		t.Fatalf("call: %s", text(res))
	}
	testwait.Recv(t, e.seen, "the upstream to receive the call")
	var toolSpan sdktrace.ReadOnlySpan
	httpSpans := map[trace.SpanID]bool{}
	for _, s := range rec.Ended() {
		if s.Name() == "tools/call notes_create_note" {
			toolSpan = s
		} else if s.SpanKind() == trace.SpanKindServer {
			httpSpans[s.SpanContext().SpanID()] = true
			if s.Parent().TraceID().String() != traceID {
				t.Errorf("HTTP span %q parent trace %s, want the header's %s", s.Name(), s.Parent().TraceID(), traceID)
			}
		}
	}
	if toolSpan == nil {
		t.Fatalf("no tools/call span among %v", names(rec.Ended()))
	}
	// The HTTP span says which MCP method it carried.
	for _, s := range rec.Ended() {
		if s.SpanContext().SpanID() == toolSpan.Parent().SpanID() {
			if got := attrs(s, "mcp.method.name", "jsonrpc.request.id"); got["mcp.method.name"] != "tools/call" || got["jsonrpc.request.id"] == "" {
				t.Errorf("the HTTP span of the call has %v, want mcp.method.name tools/call and the request id", got)
			}
		}
	}
	if !httpSpans[toolSpan.Parent().SpanID()] || toolSpan.SpanContext().TraceID().String() != traceID || len(toolSpan.Links()) != 0 {
		t.Errorf("tools/call span parent %s (trace %s, %d links), want an HTTP span of trace %s, no link", toolSpan.Parent().SpanID(), toolSpan.SpanContext().TraceID(), len(toolSpan.Links()), traceID)
	}
}

// TestLiveSessionsGauge counts the sessions a node holds: a session is held once a
// request after initialize reaches the node, and no longer once it ends.
func TestLiveSessionsGauge(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, func(o *Options) { o.Telemetry = telemetry.New(m, nil) })
	gauge := func() float64 {
		return telemetrytest.Samples(t, reg, "switchboard_mcp_sessions")["switchboard_mcp_sessions"]
	}
	a := connect(t, e.srv.URL+"/mcp/acme", "key-alice")
	b := connect(t, e.srv.URL+"/mcp/beta", "key-bob")
	if got := gauge(); got != 0 {
		t.Errorf("sessions after two initializes = %g, want 0 (an initialize alone holds nothing)", got)
	}
	for _, c := range []*client.Client{a, b} {
		if _, err := c.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := gauge(); got != 2 {
		t.Errorf("sessions after a request in each = %g, want 2", got)
	}
	// The client ends its session with DELETE.
	end, _ := http.NewRequest(http.MethodDelete, e.srv.URL+"/mcp/acme", nil)
	end.Header.Set("Authorization", "Bearer key-alice")
	end.Header.Set(server.HeaderKeySessionID, a.GetSessionId())
	res, err := http.DefaultClient.Do(end)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("DELETE answered %d", res.StatusCode)
	}
	if got := gauge(); got != 1 {
		t.Errorf("sessions after one closed = %g, want 1", got)
	}
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	out := make([]string, 0, len(spans))
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

// attrs returns the span's attributes of the given keys, as strings.
func attrs(s sdktrace.ReadOnlySpan, keys ...string) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes() {
		for _, k := range keys {
			if kv.Key == attribute.Key(k) {
				out[k] = kv.Value.Emit()
			}
		}
	}
	return out
}
