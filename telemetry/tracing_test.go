package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/telemetry"
)

func recording() (*telemetry.Telemetry, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	return telemetry.New(nil, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))), rec
}

func TestContextFromMeta(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		meta      map[string]any
		wantTrace string // "" means ctx is unchanged (no span context)
		wantState string
	}{
		{name: "traceparent", meta: map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, wantTrace: "4bf92f3577b34da6a3ce929d0e0e4736"},
		{name: "with tracestate", meta: map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "vendor=1"},
			wantTrace: "4bf92f3577b34da6a3ce929d0e0e4736", wantState: "vendor=1"},
		{name: "beside a progress token", meta: map[string]any{"progressToken": 3, "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"}, wantTrace: "0af7651916cd43dd8448eb211c80319c"},
		{name: "no _meta"},
		{name: "no traceparent", meta: map[string]any{"progressToken": "p"}},
		{name: "malformed", meta: map[string]any{"traceparent": "00-xyz-00f067aa0ba902b7-01"}},
		{name: "all-zero trace id", meta: map[string]any{"traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}},
		{name: "not a string", meta: map[string]any{"traceparent": 42}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc := trace.SpanContextFromContext(telemetry.ContextFromMeta(context.Background(), tt.meta))
			got := ""
			if sc.IsValid() {
				got = sc.TraceID().String()
				if !sc.IsRemote() {
					t.Error("the span context from _meta is not marked remote")
				}
			}
			if got != tt.wantTrace || sc.TraceState().String() != tt.wantState {
				t.Errorf("trace %q state %q, want %q %q", got, sc.TraceState().String(), tt.wantTrace, tt.wantState)
			}
		})
	}
}

// TestHandlerContinuesTheHeaderTrace: a request with a traceparent header gets a
// server span in that trace, named after its route once the router names it.
func TestHandlerContinuesTheHeaderTrace(t *testing.T) {
	t.Parallel()
	tel, rec := recording()
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		telemetry.NameRoute(r, "/api/agents/:id")
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(tel.Handler(inner))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/api/agents/agt_1", "/healthz"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	spans := rec.Ended()
	if len(spans) != 1 { // the probe has none
		t.Fatalf("spans %d, want 1 (no span for /healthz)", len(spans))
	}
	s := spans[0]
	got := map[string]string{"name": s.Name(), "kind": s.SpanKind().String(), "parent": s.Parent().SpanID().String(), "trace": s.SpanContext().TraceID().String()}
	for _, kv := range s.Attributes() {
		if kv.Key == "http.route" || kv.Key == "http.response.status_code" {
			got[string(kv.Key)] = kv.Value.Emit()
		}
	}
	want := map[string]string{"name": "GET /api/agents/:id", "kind": "server", "parent": "00f067aa0ba902b7", "trace": "4bf92f3577b34da6a3ce929d0e0e4736",
		"http.route": "/api/agents/:id", "http.response.status_code": "204"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("server span (-want +got):\n%s", diff)
	}
}

// TestNoTracingStartsNoSpans: without a tracer provider (or with a no-op one) nothing
// is wrapped and Start returns the context's own span.
func TestNoTracingStartsNoSpans(t *testing.T) {
	t.Parallel()
	for _, tel := range []*telemetry.Telemetry{nil, telemetry.New(nil, nil), telemetry.New(nil, noop.NewTracerProvider())} {
		if tel.Tracing() {
			t.Error("Tracing() = true without a provider")
		}
		ctx := context.Background()
		if got, span := tel.Start(ctx, "x"); got != ctx || span.SpanContext().IsValid() {
			t.Error("Start without tracing made a span")
		}
	}
}

// TestGormTracing gives each statement a span under the caller's, with the SQL text
// but never its values.
func TestGormTracing(t *testing.T) {
	t.Parallel()
	tel, rec := recording()
	db := testdb.SQLite(t)
	if err := db.Use(tel.GormTracing()); err != nil {
		t.Fatal(err)
	}
	ctx, parent := tel.Start(context.Background(), "caller")
	if err := db.WithContext(ctx).Exec(`INSERT INTO tenants (id, slug, name, created_at) VALUES (?, ?, ?, CURRENT_TIMESTAMP)`, "ten_x", "secret-slug", "Secret Name").Error; err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.WithContext(ctx).Table("tenants").Where("slug = ?", "secret-slug").Count(&n).Error; err != nil || n != 1 {
		t.Fatalf("count: %d %v", n, err)
	}
	err := db.WithContext(ctx).Exec(`INSERT INTO no_such_table VALUES (1)`).Error
	parent.End()
	if err == nil {
		t.Fatal("insert into a missing table succeeded")
	}
	type row struct{ Name, Op, Table, Status string }
	var got []row
	for _, s := range rec.Ended() {
		if s.Name() == "caller" {
			continue
		}
		if s.Parent().SpanID() != parent.SpanContext().SpanID() || s.SpanKind() != trace.SpanKindClient {
			t.Errorf("span %q: parent %s kind %s, want a client span under the caller's", s.Name(), s.Parent().SpanID(), s.SpanKind())
		}
		r := row{Name: s.Name(), Status: s.Status().Code.String()}
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "db.operation.name":
				r.Op = kv.Value.AsString()
			case "db.collection.name":
				r.Table = kv.Value.AsString()
			}
			if strings.Contains(kv.Value.Emit(), "secret") || strings.Contains(kv.Value.Emit(), "Secret") {
				t.Errorf("span %q attribute %s carries a value: %s", s.Name(), kv.Key, kv.Value.Emit())
			}
		}
		if !hasAttr(s.Attributes(), "db.query.text") {
			t.Errorf("span %q has no db.query.text", s.Name())
		}
		got = append(got, r)
	}
	want := []row{
		{Name: "EXEC", Op: "EXEC", Status: "Unset"},
		{Name: "SELECT tenants", Op: "SELECT", Table: "tenants", Status: "Unset"},
		{Name: "EXEC", Op: "EXEC", Status: "Error"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("database spans (-want +got):\n%s", diff)
	}
}

func hasAttr(kvs []attribute.KeyValue, key string) bool {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return true
		}
	}
	return false
}

// TestHandlerWithoutTracingKeepsATraceIDForLogs: with tracing off no span is made, yet
// each request's context carries a trace id for its log lines: the caller's, or a
// fresh one per request.
func TestHandlerWithoutTracingKeepsATraceIDForLogs(t *testing.T) {
	t.Parallel()
	seen := make(chan trace.SpanContext, 3)
	srv := httptest.NewServer(telemetry.New(nil, nil).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- trace.SpanContextFromContext(r.Context())
	})))
	t.Cleanup(srv.Close)
	for _, header := range []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "", ""} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		if header != "" {
			req.Header.Set("Traceparent", header)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	caller := testwait.Recv(t, seen, "the first request's span")
	fresh1 := testwait.Recv(t, seen, "the second request's span")
	fresh2 := testwait.Recv(t, seen, "the third request's span")
	if caller.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("with a traceparent the trace id is %s, want the caller's", caller.TraceID())
	}
	if !fresh1.IsValid() || !fresh2.IsValid() || fresh1.TraceID() == fresh2.TraceID() || fresh1.IsSampled() {
		t.Errorf("without a traceparent: %v and %v; want two different valid unsampled trace ids", fresh1, fresh2)
	}
}
