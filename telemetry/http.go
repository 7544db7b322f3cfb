package telemetry

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
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
	// otelhttp records the raw path (url.path): a one-time link's token, a key. The
	// path with its secrets hidden replaces it at once, and NameRoute the route later.
	scrubbed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		trace.SpanFromContext(r.Context()).SetAttributes(semconv.URLPath(RedactPath(r.URL.Path)))
		next.ServeHTTP(w, r)
	})
	return otelhttp.NewHandler(scrubbed, "http.server",
		otelhttp.WithTracerProvider(t.tp),
		otelhttp.WithPropagators(propagator),
		// Named by the method until NameRoute names the route; otelhttp names it again
		// after an http.ServeMux matched a pattern (the web UI's).
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if route := PatternRoute(r.Pattern); route != "" {
				return r.Method + " " + route
			}
			return r.Method
		}),
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
// once the router has matched it, and puts the route in place of the path (url.path):
// paths would make too many span names, and carry secrets (/invite/sbi_…).
func NameRoute(r *http.Request, route string) {
	span := trace.SpanFromContext(r.Context())
	if route == "" || !span.IsRecording() {
		return
	}
	span.SetName(r.Method + " " + route)
	span.SetAttributes(attribute.String("http.route", route), semconv.URLPath(route))
}

// PatternRoute is the route of a pattern an http.ServeMux matched, without its
// method: "GET /invite/{token}" is /invite/{token}.
func PatternRoute(pattern string) string {
	if _, route, ok := strings.Cut(pattern, " "); ok {
		return route
	}
	return pattern
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
		rt = otelhttp.NewTransport(scrubbedTransport{next: rt},
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

// scrubbedTransport runs inside an upstream request's client span and replaces the URL
// otelhttp recorded (url.full, with the query: ?api_key=…) by RedactURL's.
type scrubbedTransport struct{ next http.RoundTripper }

func (t scrubbedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	trace.SpanFromContext(req.Context()).SetAttributes(semconv.URLFull(RedactURL(req.URL)))
	return t.next.RoundTrip(req)
}
