package mcpadapter

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-hub/switchboard/telemetry"
)

// telemetryOptions instrument a scope's server: every tools/call gets a span that
// continues the trace named by the request's _meta.traceparent (the MCP convention),
// and the live sessions are counted.
func (a *Adapter) telemetryOptions() []server.ServerOption {
	t := a.opts.Telemetry
	if t == nil {
		return nil
	}
	opts := []server.ServerOption{server.WithToolHandlerMiddleware(a.toolSpan)}
	if t.Tracing() {
		// The HTTP request's span says which MCP method it carried (initialize,
		// tools/list, …); tools/call gets a span of its own (toolSpan).
		opts = append(opts, withHooks(func(hooks *server.Hooks) {
			hooks.AddBeforeAny(func(ctx context.Context, id any, method mcp.MCPMethod, _ any) { nameSpan(ctx, id, method) })
		}))
	}
	if m := t.Metrics(); m != nil {
		opts = append(opts, withHooks(func(hooks *server.Hooks) {
			hooks.AddOnRegisterSession(func(context.Context, server.ClientSession) { m.SessionOpened() })
			hooks.AddOnUnregisterSession(func(context.Context, server.ClientSession) { m.SessionClosed() })
		}))
	}
	return opts
}

// toolSpan is the tool middleware telemetryOptions gives a scope's server (and the
// plain call path runs itself, plain_calls.go): a span per tools/call.
func (a *Adapter) toolSpan(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	t := a.opts.Telemetry
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var meta map[string]any
		if req.Params.Meta != nil {
			meta = req.Params.Meta.AdditionalFields
		}
		sessionID := req.Header.Get(server.HeaderKeySessionID)
		if s := server.ClientSessionFromContext(ctx); sessionID == "" && s != nil {
			sessionID = s.SessionID()
		}
		ctx, span := t.StartToolCall(ctx, req.Params.Name, sessionID, meta)
		res, err := next(ctx, req)
		if err == nil && res != nil && res.IsError && span.IsRecording() {
			span.SetStatus(codes.Error, "the tool answered with an error")
		}
		telemetry.EndSpan(span, err)
		return res, err
	}
}

// nameSpan says on the HTTP request's span which MCP method it carried.
func nameSpan(ctx context.Context, id any, method mcp.MCPMethod) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String("mcp.method.name", string(method)), attribute.String("jsonrpc.request.id", fmt.Sprint(id)))
	}
}

// ownBeforeAny is how many BeforeAny hooks telemetryOptions adds to a scope's server:
// the tools/list cache does their work itself (nameSpan) and ignores them.
func (a *Adapter) ownBeforeAny() int {
	if a.opts.Telemetry != nil && a.opts.Telemetry.Tracing() {
		return 1
	}
	return 0
}

// withHooks adds hooks to the server's, which other options may add to as well.
func withHooks(add func(*server.Hooks)) server.ServerOption {
	return func(s *server.MCPServer) {
		hooks := s.GetHooks()
		if hooks == nil {
			hooks = &server.Hooks{}
			server.WithHooks(hooks)(s)
		}
		add(hooks)
	}
}
