package telemetry_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboard-hub/switchboard/telemetry"
)

// TestUpstreamSpansCarryNoSecrets: an upstream request's client span shows its URL
// without user information, with the query's values hidden (an API key in ?api_key=)
// and the secrets of its path hidden; the upstream still gets the whole URL.
func TestUpstreamSpansCarryNoSecrets(t *testing.T) {
	t.Parallel()
	var got string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.RequestURI()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(upstream.Close)
	exp := tracetest.NewInMemoryExporter()
	tel := telemetry.New(nil, sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	client := &http.Client{Transport: tel.UpstreamTransport("fake", http.DefaultTransport)}
	u, err := url.Parse(upstream.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("bot", "hunter2-password")
	u.Path = "/hooks/sbk_abcdefghijkl_Path0123456789/send"
	u.RawQuery = "api_key=plain-key-0123456789&next=sbs_Query0123456789&cursor=2"
	res, err := client.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if want := "/hooks/sbk_abcdefghijkl_Path0123456789/send?api_key=plain-key-0123456789&next=sbs_Query0123456789&cursor=2"; got != want {
		t.Errorf("the upstream got %q, want %q", got, want)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want the request's one", len(spans))
	}
	full := ""
	for _, a := range spans[0].Attributes {
		v := a.Value.Emit()
		if telemetry.HasSecret(v) || strings.Contains(v, "hunter2") || strings.Contains(v, "plain-key") {
			t.Errorf("%s = %q carries a secret", a.Key, v)
		}
		if a.Key == "url.full" {
			full = v
		}
	}
	if want := upstream.URL + "/hooks/sbk_…/send?api_key=REDACTED&next=REDACTED&cursor=REDACTED"; full != want {
		t.Errorf("url.full = %q, want %q", full, want)
	}
}

// TestRedactPath: the secrets a path or query may carry are hidden, keeping their kind.
func TestRedactPath(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"/invite/sbi_abc123", "/invite/sbi_…"},
		{"/mcp/acme?key=sbk_x_y&b=1", "/mcp/acme?key=sbk_…&b=1"},
		{"/api/agents/agt_1", "/api/agents/agt_1"},
	}
	for _, tt := range tests {
		if got := telemetry.RedactPath(tt.in); got != tt.want || telemetry.HasSecret(got) {
			t.Errorf("RedactPath(%q) = %q (a secret left: %t), want %q", tt.in, got, telemetry.HasSecret(got), tt.want)
		}
	}
}
