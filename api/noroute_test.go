package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/api"
)

// TestNoRoute checks that paths outside /api reach the NoRoute handler (the web UI) with
// the status it chooses, and unknown /api paths answer a JSON 404.
func TestNoRoute(t *testing.T) {
	t.Parallel()
	page := http.NewServeMux()
	page.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "the page") })
	srv := httptest.NewServer(api.New(api.Options{Logger: slog.New(slog.DiscardHandler), NoRoute: page}))
	t.Cleanup(srv.Close)
	tests := []struct {
		name       string
		path       string
		wantStatus int
		wantBody   string
	}{
		{name: "page", path: "/", wantStatus: http.StatusOK, wantBody: "the page"},
		{name: "missing page", path: "/nope", wantStatus: http.StatusNotFound, wantBody: "404 page not found\n"},
		{name: "unknown API path", path: "/api/nope", wantStatus: http.StatusNotFound, wantBody: `{"error":{"code":"not_found","message":"no such API endpoint: GET /api/nope"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.wantStatus || string(b) != tc.wantBody {
				t.Errorf("status %d body %q, want %d %q", res.StatusCode, b, tc.wantStatus, tc.wantBody)
			}
		})
	}
}

// TestAccessLogUnmatched checks that the request log names the path of a request no
// route matched, with a one-time link's token hidden, and only the route of one that
// matched.
func TestAccessLogUnmatched(t *testing.T) {
	t.Parallel()
	var buf lockedLog
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == "took" {
			return slog.Attr{}
		}
		return a
	}}))
	srv := httptest.NewServer(api.New(api.Options{Logger: log, NoRoute: http.NotFoundHandler()}))
	t.Cleanup(srv.Close)
	for _, p := range []string{"/invite/sbi_SECRET123/x", "/healthz", "/api/nope"} {
		res, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	srv.Close() // waits for the handlers, so every line is written
	want := []string{
		`level=INFO msg="http request" method=GET route=(unmatched) path=/invite/sbi_…/x status=404`,
		`level=INFO msg="http request" method=GET route=/healthz status=200`,
		`level=INFO msg="http request" method=GET route=(unmatched) path=/api/nope status=404`,
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(buf.String()), "\n")); diff != "" {
		t.Errorf("request log (-want +got):\n%s", diff)
	}
}

// lockedLog is a log destination safe for the server's goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
