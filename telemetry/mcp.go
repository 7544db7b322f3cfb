package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// metaCarrier reads trace context from an MCP request's params._meta, where the MCP
// convention puts "traceparent" and "tracestate" (and "baggage") as strings.
type metaCarrier map[string]any

func (c metaCarrier) Get(key string) string {
	s, _ := c[key].(string)
	return s
}
func (c metaCarrier) Set(key, value string) { c[key] = value }
func (c metaCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// ContextFromMeta returns ctx with the remote span an MCP request's _meta names
// (traceparent, tracestate), so the spans the hub starts for the request continue the
// caller's trace. Without a valid traceparent, ctx is returned unchanged.
func ContextFromMeta(ctx context.Context, meta map[string]any) context.Context {
	if _, ok := meta["traceparent"]; !ok {
		return ctx
	}
	if !trace.SpanContextFromContext(propagator.Extract(context.Background(), metaCarrier(meta))).IsValid() {
		return ctx
	}
	return propagator.Extract(ctx, metaCarrier(meta))
}

// MetaWithTrace returns an MCP request's _meta carrying ctx's trace context
// (traceparent, tracestate), so a remote MCP server continues the trace; nil when ctx
// has no span.
func MetaWithTrace(ctx context.Context) map[string]any {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	meta := metaCarrier{}
	propagation.TraceContext{}.Inject(ctx, meta)
	return meta
}

// StartToolCall starts the span of an MCP tools/call request: named "tools/call TOOL",
// a server span whose parent is the traceparent of the request's _meta when it has one
// (the caller's trace continues through the hub), else the HTTP request's span. A
// parent from _meta gets a link to the HTTP request's span, so both stay reachable.
func (t *Telemetry) StartToolCall(ctx context.Context, tool, sessionID string, meta map[string]any) (context.Context, trace.Span) {
	httpSpan := trace.SpanContextFromContext(ctx)
	ctx = ContextFromMeta(ctx, meta)
	if !t.Tracing() {
		return ctx, trace.SpanFromContext(ctx)
	}
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String("mcp.method.name", "tools/call"),
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", tool),
		),
	}
	if sessionID != "" {
		opts = append(opts, trace.WithAttributes(attribute.String("mcp.session.id", SessionDigest(sessionID))))
	}
	if httpSpan.IsValid() && !httpSpan.Equal(trace.SpanContextFromContext(ctx)) {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: httpSpan}))
	}
	return t.tracer.Start(ctx, "tools/call "+tool, opts...)
}

// EndSpan ends a span, marking it failed when err is not nil (the error's message is
// recorded, so it must not carry secrets: pass coded errors, whose messages are for users).
func EndSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
