package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// TestTracesCarryNoSecrets: the server spans the hub exports name routes, never paths:
// after requests with one-time links, keys and sessions in their paths and queries
// (pages of the web UI behind NoRoute, API routes, unmatched paths), no attribute,
// event or span name of any exported span carries a secret the logs hide, and the
// invitation page's span says /invite/{token}.
func TestTracesCarryNoSecrets(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tel := telemetry.New(nil, sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	page := http.NewServeMux() // the web UI's routes for one-time links
	page.HandleFunc("GET /invite/{token}", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "set a password") })
	page.HandleFunc("POST /invite/{token}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusSeeOther) })
	srv := httptest.NewServer(tel.Handler(api.New(api.Options{Logger: slog.New(slog.DiscardHandler), NoRoute: page})))
	t.Cleanup(srv.Close)
	requests := []struct{ method, path string }{
		{http.MethodGet, "/invite/sbi_Invite0123456789abcdefghijklmn"},
		{http.MethodPost, "/invite/sbi_Reset0123456789abcdefghijklmno"},
		{http.MethodGet, "/api/connections/callback?code=sbc_Code0123456789&state=sbs_State0123456789"},
		{http.MethodGet, "/api/keys/sbk_abcdefghijkl_Secret0123456789"},
		{http.MethodPost, "/hooks/workflows/acme/nightly/github?token=sbk_abcdefghijkl_Query0123456789"},
		{http.MethodGet, "/nowhere/sbs_Session0123456789abcdef/x"},
	}
	for _, r := range requests {
		req, err := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	spans := exp.GetSpans()
	if len(spans) != len(requests) {
		t.Fatalf("%d spans exported, want one per request (%d)", len(spans), len(requests))
	}
	invite := false
	for _, s := range spans {
		attrs := map[string]string{"span name": s.Name, "status": s.Status.Description}
		for _, a := range s.Attributes {
			attrs[string(a.Key)] = a.Value.Emit()
		}
		for _, e := range s.Events {
			for _, a := range e.Attributes {
				attrs[e.Name+" "+string(a.Key)] = a.Value.Emit()
			}
		}
		for k, v := range attrs {
			if telemetry.HasSecret(v) {
				t.Errorf("span %q: %s = %q carries a secret", s.Name, k, v)
			}
		}
		if s.Name == "GET /invite/{token}" {
			invite = attrs["url.path"] == "/invite/{token}" && attrs["http.route"] == "/invite/{token}"
		}
	}
	if !invite {
		t.Errorf("no span GET /invite/{token} with url.path and http.route /invite/{token}; spans: %v", names(spans))
	}
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, 0, len(spans))
	for _, s := range spans {
		set := attribute.NewSet(s.Attributes...)
		out = append(out, s.Name+" "+set.Encoded(attribute.DefaultEncoder()))
	}
	return out
}
