package securitytest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// TestSpansCarryNoSecrets traces the hub as serve does (every request's server span)
// and sends it every route of the suite's table as the owner, with secrets in paths
// and queries besides (one-time links, keys, OAuth codes), and an MCP session: no
// exported span's name, attribute, event or status holds a secret the logs hide, the
// owner's key or the victim's GitHub token.
func TestSpansCarryNoSecrets(t *testing.T) {
	t.Parallel()
	h := newHub(t, testdb.SQLite(t))
	f := h.seed()
	exp := tracetest.NewInMemoryExporter()
	tel := telemetry.New(nil, sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	traced := httptest.NewServer(tel.Handler(h.engine))
	t.Cleanup(traced.Close)
	// Redirects are answers: one may lead to the hub's public URL or an identity provider.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(key, method, path, body string) {
		t.Helper()
		req, err := http.NewRequest(method, traced.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	keys := make([]string, 0, len(routes))
	for k := range routes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r := routes[k]
		if r.mode == mcpRoute || strings.HasPrefix(k, "DELETE ") {
			continue // deleting the fixture's objects would leave later routes nothing to act on
		}
		method, _, _ := strings.Cut(k, " ")
		path, body := r.request(f)
		send(f.owner, method, path, body)
	}
	for _, p := range []string{
		"/invite/sbi_Invite0123456789abcdefghijklmn",
		"/reset/sbr_Reset0123456789abcdefghijklmno",
		"/oauth/callback?code=sbc_Code0123456789&state=sbs_State0123456789",
		"/api/connections?key=" + f.owner,
	} {
		send("", http.MethodGet, p, "")
	}
	send(f.owner, http.MethodPost, "/mcp/"+f.victimSlug, mcpCalls[0].body(nil, 0))

	spans := exp.GetSpans()
	if len(spans) < len(keys)/2 {
		t.Fatalf("%d spans exported for %d routes: the hub is not traced", len(spans), len(keys))
	}
	for _, s := range spans {
		fields := map[string]string{"span name": s.Name, "status": s.Status.Description}
		for _, a := range s.Attributes {
			fields[string(a.Key)] = a.Value.Emit()
		}
		for _, e := range s.Events {
			for _, a := range e.Attributes {
				fields[e.Name+" "+string(a.Key)] = a.Value.Emit()
			}
		}
		for k, v := range fields {
			if telemetry.HasSecret(v) || strings.Contains(v, f.owner) || strings.Contains(v, victimToken) {
				t.Errorf("span %q: %s = %q carries a secret", s.Name, k, v)
			}
		}
	}
}
