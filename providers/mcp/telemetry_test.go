package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
	"github.com/switchboard-hub/switchboard/router"
	"github.com/switchboard-hub/switchboard/telemetry"
	"github.com/switchboard-hub/switchboard/telemetry/telemetrytest"
)

// TestRemoteCallTelemetry: a call to a remote MCP server's tool gets a client span
// under the router's, counts as an upstream request of provider mcp, and its time at
// the server is its upstream time, not the hub's.
func TestRemoteCallTelemetry(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tel := telemetry.New(m, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	r := newRigWith(t, db, providers.NewRegistry(), tel)
	up := newMCPServer(t, "Bearer right-token")
	metas := make(chan map[string]any, 1)
	up.mcp.AddTool(mcpgo.NewTool("trace", mcpgo.WithDescription("Say what _meta came."), mcpgo.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			var meta map[string]any
			if req.Params.Meta != nil {
				meta = req.Params.Meta.AdditionalFields
			}
			metas <- meta
			return mcpgo.NewToolResultText("ok"), nil
		})
	ctx := context.Background()
	regd, err := r.remote.Register(ctx, r.a, remotemcp.RegisterInput{Name: "up", URL: up.url(), Auth: "bearer", Token: "right-token"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.router.Execute(ctx, r.a, router.Request{Tool: "up_shout", ConnectionID: regd.Connection.ID, Args: json.RawMessage(`{"word":"hey"}`)}); err != nil {
		t.Fatal(err)
	}
	got := telemetrytest.Samples(t, reg, "switchboard_")
	if got[`switchboard_tool_calls_total{outcome="ok",provider="mcp",tool="dynamic"}`] != 1 {
		t.Errorf("tool calls: %v", got)
	}
	if got[`switchboard_upstream_requests_total{code="200",provider="mcp"}`] < 1 {
		t.Errorf("no upstream request of provider mcp counted: %v", got)
	}
	if got[`switchboard_tool_call_upstream_duration_seconds_sum{provider="mcp",tool="dynamic"}`] <= 0 {
		t.Errorf("the call's time at the server is not its upstream time: %v", got)
	}
	var routerSpan sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "router.execute" {
			routerSpan = s
		}
	}
	// The server gets the trace in the call's _meta too, the MCP convention.
	if _, err := r.router.Execute(ctx, r.a, router.Request{Tool: "up_trace", ConnectionID: regd.Connection.ID, Args: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	meta := testwait.Recv(t, metas, "the server to receive the call's _meta")
	var traceRouter sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "router.execute" && s != routerSpan {
			traceRouter = s
		}
	}
	if traceRouter == nil {
		t.Fatal("no router span for the second call")
	}
	want := "00-" + traceRouter.SpanContext().TraceID().String() + "-" + traceRouter.SpanContext().SpanID().String() + "-01"
	if meta["traceparent"] != want {
		t.Errorf("the server got _meta %v, want traceparent %s", meta, want)
	}
	if routerSpan == nil {
		t.Fatal("no router span")
	}
	children := 0
	for _, s := range rec.Ended() {
		if s.Name() == "HTTP POST mcp" && s.Parent().SpanID() == routerSpan.SpanContext().SpanID() {
			children++
		}
	}
	if children == 0 {
		t.Error("no client span of the request to the server under the router's span")
	}
}
