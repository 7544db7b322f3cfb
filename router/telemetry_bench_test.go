package router

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// answerAtOnce is an upstream in memory, so the benchmark measures the hub's own work.
type answerAtOnce struct{}

func (answerAtOnce) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"greeting":"hello ada"}`)), Request: r}, nil
}

// BenchmarkExecuteTelemetry measures what telemetry adds to a tool call in the router
// (the upstream answers from memory): none; metrics; metrics and traces recorded by
// the SDK with no exporter (sampled, so every span is built).
func BenchmarkExecuteTelemetry(b *testing.B) {
	for _, mode := range []string{"off", "metrics", "metrics+traces"} {
		b.Run(mode, func(b *testing.B) {
			f := newFixture(b)
			var tel *telemetry.Telemetry
			switch mode {
			case "metrics":
				m, _ := telemetry.NewMetrics(prometheus.NewRegistry())
				tel = telemetry.New(m, nil)
			case "metrics+traces":
				m, _ := telemetry.NewMetrics(prometheus.NewRegistry())
				tel = telemetry.New(m, sdktrace.NewTracerProvider())
			}
			f.router = New(Options{Registry: f.router.registry, Connections: f.conns, Audit: f.audit, Telemetry: tel,
				Transports: &providers.Transports{New: func(string) http.RoundTripper { return answerAtOnce{} }, Wrap: tel.UpstreamTransport}})
			req := Request{Tool: "fake_greet", ConnectionID: "con_a1", Args: json.RawMessage(`{"name":"ada"}`)}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := f.router.Execute(context.Background(), alice, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
