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
	srv := httptest.NewServer(telemetry.AdminHandler(reg, nil))
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
			status, b := adminRequest(t, tt.method, srv.URL+tt.path, "")
			if status != tt.wantStatus || !strings.Contains(b, tt.wantBody) {
				t.Errorf("%s %s: status %d, body %.300s; want %d with %q", tt.method, tt.path, status, b, tt.wantStatus, tt.wantBody)
			}
		})
	}
}

// TestAdminHandlerHosts sends requests with many Host headers: an IP address,
// localhost and the configured names are answered; any other name (a page that
// rebound its own name to the listener's address) gets 421 and nothing of the
// metrics or profiles.
func TestAdminHandlerHosts(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	if _, err := telemetry.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(telemetry.AdminHandler(reg, []string{"metrics.internal", "Node-1.Example.com."}))
	t.Cleanup(srv.Close)
	tests := []struct {
		name, host, path string
		wantStatus       int
	}{
		{name: "the listener's address", host: strings.TrimPrefix(srv.URL, "http://"), path: "/metrics", wantStatus: http.StatusOK},
		{name: "an IPv4 address without a port", host: "10.1.2.3", path: "/metrics", wantStatus: http.StatusOK},
		{name: "an IPv6 address", host: "[::1]:9090", path: "/debug/pprof/", wantStatus: http.StatusOK},
		{name: "localhost", host: "localhost:9090", path: "/metrics", wantStatus: http.StatusOK},
		{name: "localhost in capitals", host: "LOCALHOST", path: "/metrics", wantStatus: http.StatusOK},
		{name: "a configured name", host: "metrics.internal:9090", path: "/metrics", wantStatus: http.StatusOK},
		{name: "a configured name in another case with a final dot", host: "node-1.example.com.", path: "/debug/pprof/", wantStatus: http.StatusOK},
		{name: "a rebound name", host: "attacker.example:9090", path: "/metrics", wantStatus: http.StatusMisdirectedRequest},
		{name: "a rebound name at pprof", host: "attacker.example", path: "/debug/pprof/cmdline", wantStatus: http.StatusMisdirectedRequest},
		{name: "a name under localhost", host: "evil.localhost", path: "/metrics", wantStatus: http.StatusMisdirectedRequest},
		{name: "a name ending like a configured one", host: "xmetrics.internal", path: "/metrics", wantStatus: http.StatusMisdirectedRequest},
		{name: "a name that starts with an address", host: "127.0.0.1.attacker.example", path: "/metrics", wantStatus: http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, b := adminRequest(t, http.MethodGet, srv.URL+tt.path, tt.host)
			if status != tt.wantStatus {
				t.Fatalf("Host %q: status %d, body %.200s; want %d", tt.host, status, b, tt.wantStatus)
			}
			if tt.wantStatus != http.StatusOK && strings.Contains(b, "goroutine") {
				t.Errorf("Host %q: the refusal carries metrics or profiles: %.200s", tt.host, b)
			}
		})
	}
}

// TestCheckAdminHost checks the names an operator may give: host names only.
func TestCheckAdminHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		wantOK bool
	}{
		{"metrics.internal", true},
		{"node-1.example.com.", true},
		{"localhost", true},
		{"", false},
		{"metrics.internal:9090", false},
		{"http://metrics.internal", false},
		{"metrics.internal/metrics", false},
		{"-bad.example", false},
		{"a..b", false},
		{"*.example.com", false},
	}
	for _, tt := range tests {
		if err := telemetry.CheckAdminHost(tt.name); (err == nil) != tt.wantOK {
			t.Errorf("CheckAdminHost(%q) = %v, want ok %v", tt.name, err, tt.wantOK)
		}
	}
}

// adminRequest sends one request to the admin listener, with host as its Host header
// when set, and returns the status and body.
func adminRequest(t *testing.T, method, url, host string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if host != "" {
		req.Host = host
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
