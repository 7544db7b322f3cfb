package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

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
