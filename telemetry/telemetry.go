package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Telemetry is what instrumented components take: the metrics and the tracer
// provider. A nil *Telemetry records nothing and starts no spans.
type Telemetry struct {
	metrics *Metrics
	tp      trace.TracerProvider
	tracer  trace.Tracer
	tracing bool
}

// TracerName names the spans Switchboard starts itself.
const TracerName = "github.com/switchboard-hub/switchboard"

// New returns the telemetry of metrics (nil: none) and a tracer provider (nil: no
// tracing). Pass noop's provider, or nil, when traces are not exported, so the hub
// starts no spans of its own at all.
func New(m *Metrics, tp trace.TracerProvider) *Telemetry {
	t := &Telemetry{metrics: m, tp: tp, tracing: tp != nil}
	if _, isNoop := tp.(noop.TracerProvider); isNoop || tp == nil {
		t.tp, t.tracing = noop.NewTracerProvider(), false
	}
	t.tracer = t.tp.Tracer(TracerName)
	return t
}

// Metrics returns the metrics, nil when there are none.
func (t *Telemetry) Metrics() *Metrics {
	if t == nil {
		return nil
	}
	return t.metrics
}

// Tracing reports whether spans are recorded.
func (t *Telemetry) Tracing() bool { return t != nil && t.tracing }

// TracerProvider returns the tracer provider (a no-op one when tracing is off).
func (t *Telemetry) TracerProvider() trace.TracerProvider {
	if t == nil {
		return noop.NewTracerProvider()
	}
	return t.tp
}

// Start starts a span when tracing is on; otherwise it returns ctx and the span ctx
// already carries (nothing is allocated).
func (t *Telemetry) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !t.Tracing() {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.tracer.Start(ctx, name, opts...)
}

// propagator reads and writes W3C trace context (traceparent, tracestate) and baggage.
var propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Propagator returns the W3C trace context and baggage propagator the hub uses for
// HTTP headers and MCP _meta.
func Propagator() propagation.TextMapPropagator { return propagator }
