package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/providers"
)

// bareEngine is the API with a connections service (for the OAuth callback) and no
// other store, and o's other options: enough for what runs before a handler.
func bareEngine(t testing.TB, publicURL string, o api.Options) *gin.Engine {
	t.Helper()
	ui := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><title>ui</title>")
	})
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "k.json"))
	if err != nil {
		t.Fatal(err)
	}
	svc := connections.NewService(connections.NewStore(testdb.SQLite(t), kr), providers.NewRegistry(), &providers.Transports{}, nil)
	o.PublicURL, o.Connections, o.Logger, o.NoRoute = publicURL, svc, slog.New(slog.DiscardHandler), ui
	return api.New(o)
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
			e := bareEngine(t, tt.publicURL, api.Options{})
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
	e := bareEngine(t, "https://hub.example.com", api.Options{})
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
	e := bareEngine(t, "https://hub.example.com", api.Options{})
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

// TestPublicBodies: a route that reads its body before any credential is checked (a
// route added after New, the UI) takes a small body only: one declared longer is
// refused with 413 before its handler runs. One within the bound is reserved from the
// budget's pool of forms while it is served, one client address holding at most its
// share of the pool (429 beyond it, while another address is served) and the pool at
// most its own share of the budget (503); each refusal carries Retry-After, and all of
// it is given back when the requests are done. A body that stalls is ended by the read
// deadline, its reservation given back; /api answers a caller without a key before it
// reads a byte, within the deadline too; a route under OwnBodies takes a large body,
// and once it lifted the deadline, a slow one.
func TestPublicBodies(t *testing.T) {
	t.Parallel()
	const kb = 1 << 10
	budget := limits.NewBodyBudget(1<<20, 0) // a pool of 128 KiB, 64 KiB of it per address
	e := bareEngine(t, "", api.Options{BodyBudget: budget, BodyTimeout: 200 * time.Millisecond, OwnBodies: []string{"/own/"}})
	started := make(chan struct{})
	release := make(chan struct{})
	e.POST("/hold", func(c *gin.Context) {
		if _, err := io.Copy(io.Discard, c.Request.Body); err != nil {
			c.String(http.StatusBadRequest, "read: %v", err)
			return
		}
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
	e.POST("/own/big", func(c *gin.Context) {
		limits.LiftBodyDeadline(c.Writer) // as a route that checked its caller does
		n, err := io.Copy(io.Discard, c.Request.Body)
		if err != nil {
			c.String(http.StatusBadRequest, "read: %v", err)
			return
		}
		c.String(http.StatusOK, "%d", n)
	})
	sources, err := limits.NewSources([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sources.Handler(e))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	post := func(path, client string, size int) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(strings.Repeat("x", size)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return nil, ""
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}

	for _, path := range []string{"/hold", "/signin"} {
		if resp, body := post(path, "192.0.2.1", 65*kb); resp == nil || resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "this URL takes at most 65536") {
			t.Errorf("POST %s of 65 KiB: %v %s, want 413 saying the bound", path, resp, body)
		}
	}
	if resp, body := post("/own/big", "192.0.2.1", 1<<20); resp == nil || resp.StatusCode != http.StatusOK || body != "1048576" {
		t.Errorf("1 MiB to a route that reserves its own body: %v %s", resp, body)
	}

	var wg sync.WaitGroup
	for _, client := range []string{"192.0.2.1", "192.0.2.2"} {
		wg.Go(func() {
			if resp, body := post("/hold", client, 60*kb); resp == nil || resp.StatusCode != http.StatusNoContent {
				t.Errorf("60 KiB from %s: %v %s", client, resp, body)
			}
		})
		testwait.Recv(t, started, "the request from "+client+" to be held")
	}
	if got := budget.InUse(); got != 120*kb {
		t.Errorf("budget in use = %d, want %d", got, 120*kb)
	}
	for _, tt := range []struct {
		client string
		want   int
	}{{"192.0.2.1", http.StatusTooManyRequests}, {"192.0.2.3", http.StatusServiceUnavailable}} {
		if resp, body := post("/hold", tt.client, 10*kb); resp == nil || resp.StatusCode != tt.want || resp.Header.Get("Retry-After") != "1" {
			t.Errorf("10 KiB more from %s: %v %s, want %d with Retry-After: 1", tt.client, resp, body, tt.want)
		}
	}
	close(release)
	testwait.Wait(t, "the held requests to be answered", wg.Wait)
	if got := budget.InUse(); got != 0 {
		t.Errorf("budget in use after the requests = %d, want 0", got)
	}

	// A route that lifted the deadline takes a body that pauses for longer.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /own/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{")
	time.Sleep(600 * time.Millisecond) // three times the deadline
	fmt.Fprintf(conn, "}")
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("a paused body at a route that lifted the deadline: %v %v, want 200", resp, err)
	}

	// A body that stalls after its first byte, at a public route (one declared over its
	// bound too, which the server would wait for before answering) and at /api without
	// a key: each is answered, and nothing stays reserved.
	for _, tt := range []struct {
		path         string
		length, want int
	}{{"/hold", 60 * kb, http.StatusBadRequest}, {"/hold", 100 * kb, http.StatusRequestEntityTooLarge}, {"/api/keys", 4 << 20, http.StatusUnauthorized}, {"/api/keys", 60 * kb, http.StatusUnauthorized}} {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", tt.path, tt.length)
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("a stalled body at %s: no answer: %v", tt.path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("a stalled body at %s: status %d, want %d", tt.path, resp.StatusCode, tt.want)
		}
		if got := budget.InUse(); got != 0 {
			t.Errorf("budget in use after a stalled body at %s = %d, want 0", tt.path, got)
		}
	}
}
