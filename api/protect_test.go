package api_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/providers"
)

// bareEngine is the API with a connections service (for the OAuth callback) and no
// other store: enough for what runs before a handler.
func bareEngine(t testing.TB, publicURL string, budget *limits.BodyBudget) *gin.Engine {
	t.Helper()
	ui := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><title>ui</title>")
	})
	kr, err := connections.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "k.json"))
	if err != nil {
		t.Fatal(err)
	}
	svc := connections.NewService(connections.NewStore(testdb.SQLite(t), kr), providers.NewRegistry(), &providers.Transports{}, nil)
	return api.New(api.Options{PublicURL: publicURL, Connections: svc, Logger: slog.New(slog.DiscardHandler), NoRoute: ui, BodyBudget: budget})
}

// serve sends a request straight to the engine as if it arrived on a listener at local.
func serve(h http.Handler, local net.Addr, method, target, host, contentType, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body == "" {
		req = httptest.NewRequest(method, target, nil)
	}
	req.Host = host
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return serveRequest(h, local, req)
}

// serveRequest sends req straight to the engine as if it arrived on a listener at local.
func serveRequest(h http.Handler, local net.Addr, req *http.Request) *httptest.ResponseRecorder {
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, local))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

var (
	loopbackListener = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	publicListener   = &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8080}
)

// TestSecurityHeaders: the OAuth callback's page (and every answer) carries a CSP (the
// page's lets it load the UI's stylesheet only),
// X-Frame-Options DENY and nosniff, and HSTS only under an https public URL.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		publicURL string
		wantHSTS  string
	}{
		{name: "https", publicURL: "https://hub.example.com", wantHSTS: "max-age=31536000"},
		{name: "http", publicURL: "http://hub.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := bareEngine(t, tt.publicURL, nil)
			rec := serve(e, publicListener, http.MethodGet, "/oauth/callback?state=nope&code=x", "hub.example.com", "", "")
			if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
				t.Fatalf("callback answered %q, want a page", rec.Header().Get("Content-Type"))
			}
			want := map[string]string{
				"Content-Security-Policy":   "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
				"X-Frame-Options":           "DENY",
				"X-Content-Type-Options":    "nosniff",
				"Strict-Transport-Security": tt.wantHSTS,
			}
			for k, v := range want {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestHostCheck: /api, the OAuth callback and the UI answer only under the public URL's
// host (and loopback names on a loopback listener); the probes answer any Host.
func TestHostCheck(t *testing.T) {
	t.Parallel()
	e := bareEngine(t, "https://hub.example.com", nil)
	tests := []struct {
		name, path, host string
		local            net.Addr
		refused          bool
	}{
		{name: "api, public host", path: "/api/providers", host: "hub.example.com", local: publicListener},
		{name: "api, public host with its default port", path: "/api/providers", host: "HUB.example.com:443", local: publicListener},
		{name: "api, other host", path: "/api/providers", host: "rebound.attacker.test", local: publicListener, refused: true},
		{name: "api, other port", path: "/api/providers", host: "hub.example.com:8443", local: publicListener, refused: true},
		{name: "api, loopback host on a public listener", path: "/api/providers", host: "127.0.0.1:8080", local: publicListener, refused: true},
		{name: "api, loopback host on a loopback listener", path: "/api/providers", host: "localhost:8080", local: loopbackListener},
		{name: "api, other host on a loopback listener", path: "/api/providers", host: "rebound.attacker.test", local: loopbackListener, refused: true},
		{name: "ui, other host", path: "/connections", host: "rebound.attacker.test", local: publicListener, refused: true},
		{name: "ui, public host", path: "/connections", host: "hub.example.com", local: publicListener},
		{name: "callback, other host", path: "/oauth/callback?state=x", host: "rebound.attacker.test", local: publicListener, refused: true},
		{name: "probe, any host", path: "/healthz", host: "10.0.0.5:8080", local: publicListener},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := serve(e, tt.local, http.MethodGet, tt.path, tt.host, "", "")
			if refused := rec.Code == http.StatusMisdirectedRequest; refused != tt.refused {
				t.Fatalf("status %d (refused %t), want refused %t: %s", rec.Code, refused, tt.refused, rec.Body)
			}
			if tt.refused && !strings.Contains(rec.Body.String(), "hub.example.com") {
				t.Errorf("the refusal does not say which host to use: %s", rec.Body)
			}
		})
	}
}

// TestRequireJSON: /api refuses a body that is not declared JSON with 415, before it
// looks at the caller; JSON media types and empty bodies pass on.
func TestRequireJSON(t *testing.T) {
	t.Parallel()
	e := bareEngine(t, "https://hub.example.com", nil)
	tests := []struct {
		name, contentType, body string
		want                    int
	}{
		{name: "text/plain", contentType: "text/plain", body: `{"name":"x"}`, want: http.StatusUnsupportedMediaType},
		{name: "form", contentType: "application/x-www-form-urlencoded", body: `name=x`, want: http.StatusUnsupportedMediaType},
		{name: "multipart", contentType: "multipart/form-data; boundary=x", body: "--x--", want: http.StatusUnsupportedMediaType},
		{name: "none", body: `{"name":"x"}`, want: http.StatusUnsupportedMediaType},
		{name: "json", contentType: "application/json; charset=utf-8", body: `{"name":"x"}`, want: http.StatusUnauthorized},
		{name: "json suffix", contentType: "application/merge-patch+json", body: `{"name":"x"}`, want: http.StatusUnauthorized},
		{name: "no body", want: http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := serve(e, publicListener, http.MethodPost, "/api/keys", "hub.example.com", tt.contentType, tt.body)
			if rec.Code != tt.want {
				t.Errorf("status %d, want %d: %s", rec.Code, tt.want, rec.Body)
			}
		})
	}
}

// TestBodyBudget: bodies in flight share one byte budget, on every route of the engine
// (one added after New, as the MCP URLs are, included); a request that does not fit is
// refused with 503 and Retry-After, and fits again once others are done.
func TestBodyBudget(t *testing.T) {
	t.Parallel()
	const mb = 1 << 20
	budget := limits.NewBodyBudget(2*mb, mb)
	e := bareEngine(t, "", budget)
	started := make(chan struct{})
	release := make(chan struct{})
	e.POST("/hold", func(c *gin.Context) {
		_, _ = io.Copy(io.Discard, c.Request.Body)
		// Neither wait outlives the request: a test that failed before releasing them
		// must not hold srv.Close.
		select {
		case started <- struct{}{}:
		case <-c.Request.Context().Done():
			return
		}
		select {
		case <-release:
		case <-c.Request.Context().Done():
			return
		}
		c.Status(http.StatusNoContent)
	})
	srv := httptest.NewServer(e)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	post := func() *http.Response {
		t.Helper()
		resp, err := http.Post(srv.URL+"/hold", "application/octet-stream", strings.NewReader(strings.Repeat("x", mb)))
		if err != nil {
			t.Error(err)
			return nil
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if resp := post(); resp != nil && resp.StatusCode != http.StatusNoContent {
				t.Errorf("a request within the budget: status %d", resp.StatusCode)
			}
		})
	}
	testwait.Recv(t, started, "the first request to be held")
	testwait.Recv(t, started, "the second request to be held")
	if got := budget.InUse(); got != 2*mb {
		t.Errorf("budget in use = %d, want %d", got, 2*mb)
	}
	resp := post()
	if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("a request beyond the budget: %v, want 503 with Retry-After: 1", resp)
	}
	close(release)
	testwait.Wait(t, "the held requests to be answered", wg.Wait)
	if got := budget.InUse(); got != 0 {
		t.Errorf("budget in use after the requests = %d, want 0", got)
	}
	go func() { <-started }()
	if resp := post(); resp == nil || resp.StatusCode != http.StatusNoContent {
		t.Errorf("a request after the others finished: %v", resp)
	}
}
