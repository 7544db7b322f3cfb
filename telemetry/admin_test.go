package telemetry_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-hub/switchboard/telemetry"
)

func TestAdminHandler(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := telemetry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.ObserveToolCall(telemetry.ToolCall{Provider: "github", Tool: "github_get_issue", Outcome: "ok"})
	srv := httptest.NewServer(telemetry.AdminHandler(reg))
	t.Cleanup(srv.Close)
	tests := []struct {
		name, method, path string
		wantStatus         int
		wantBody           string
	}{
		{name: "metrics", method: http.MethodGet, path: "/metrics", wantStatus: http.StatusOK,
			wantBody: `switchboard_tool_calls_total{outcome="ok",provider="github",tool="github_get_issue"} 1`},
		{name: "runtime metrics", method: http.MethodGet, path: "/metrics", wantStatus: http.StatusOK, wantBody: "go_goroutines "},
		{name: "pprof index", method: http.MethodGet, path: "/debug/pprof/", wantStatus: http.StatusOK, wantBody: "goroutine"},
		{name: "a profile", method: http.MethodGet, path: "/debug/pprof/goroutine?debug=1", wantStatus: http.StatusOK, wantBody: "goroutine profile:"},
		{name: "cmdline", method: http.MethodGet, path: "/debug/pprof/cmdline", wantStatus: http.StatusOK},
		{name: "metrics is read-only", method: http.MethodPost, path: "/metrics", wantStatus: http.StatusMethodNotAllowed},
		{name: "nothing else", method: http.MethodGet, path: "/api/tenant", wantStatus: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tt.wantStatus || !strings.Contains(string(b), tt.wantBody) {
				t.Errorf("%s %s: status %d, body %.300s; want %d with %q", tt.method, tt.path, res.StatusCode, b, tt.wantStatus, tt.wantBody)
			}
		})
	}
}
