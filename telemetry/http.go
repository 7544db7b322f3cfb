package telemetry

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net/http"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Handler wraps the public HTTP handler (REST API, MCP URLs, web UI): each request gets
// a server span that continues the trace of its traceparent header. The probes are
// left out. Without tracing no span is made, but the request's context still carries
// a trace id for its log lines: the caller's traceparent, or a fresh one.
func (t *Telemetry) Handler(next http.Handler) http.Handler {
	if !t.Tracing() {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(logContext(r)))
		})
	}
	return otelhttp.NewHandler(next, "http.server",
		otelhttp.WithTracerProvider(t.tp),
		otelhttp.WithPropagators(propagator),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }),
		otelhttp.WithFilter(func(r *http.Request) bool { return r.URL.Path != "/healthz" && r.URL.Path != "/readyz" }),
	)
}

// logContext returns the request's context with the span context of its traceparent
// header, or a fresh unsampled one, so that its log lines can be told apart and found.
func logContext(r *http.Request) context.Context {
	ctx := r.Context()
	if r.Header.Get("Traceparent") != "" {
		if remote := propagator.Extract(ctx, propagation.HeaderCarrier(r.Header)); trace.SpanContextFromContext(remote).IsValid() {
			return remote
		}
	}
	var tid trace.TraceID
	var sid trace.SpanID
	binary.LittleEndian.PutUint64(tid[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(tid[8:], rand.Uint64())
	binary.LittleEndian.PutUint64(sid[:], rand.Uint64()|1) // never all zero
	return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
}

// NameRoute names the request's span after its route pattern ("GET /api/agents/:id"),
// once the router has matched it; paths themselves would make too many span names.
func NameRoute(r *http.Request, route string) {
	span := trace.SpanFromContext(r.Context())
	if route == "" || !span.IsRecording() {
		return
	}
	span.SetName(r.Method + " " + route)
	span.SetAttributes(attribute.String("http.route", route))
}

// UpstreamTransport wraps a provider's shared transport: every request to the
// provider's API (each attempt) gets a client span, carries the trace in its
// traceparent header, and is counted by status code with its latency.
func (t *Telemetry) UpstreamTransport(provider string, next http.RoundTripper) http.RoundTripper {
	if t == nil {
		return next
	}
	var rt http.RoundTripper = next
	if m := t.metrics; m != nil {
		rt = &meteredTransport{next: next, provider: provider, m: m}
	}
	if t.Tracing() {
		rt = otelhttp.NewTransport(rt,
			otelhttp.WithTracerProvider(t.tp),
			otelhttp.WithPropagators(propagator),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "HTTP " + r.Method + " " + provider }),
			otelhttp.WithSpanOptions(trace.WithAttributes(attribute.String("switchboard.provider", provider))),
		)
	}
	return rt
}

// meteredTransport counts a provider's requests by status and times them.
type meteredTransport struct {
	next     http.RoundTripper
	provider string
	m        *Metrics
}

func (t *meteredTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	status := 0
	if err == nil {
		status = resp.StatusCode
	}
	t.m.ObserveUpstream(t.provider, status, time.Since(start))
	return resp, err
}
