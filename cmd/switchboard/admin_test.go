package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/testlog"
)

// TestServeAdminListener starts serve with SWITCHBOARD_ADMIN_ADDR and JSON logs: the
// metrics and profiles are on the admin listener only, and the public one does not
// serve them; the admin listener answers the names in SWITCHBOARD_ADMIN_HOSTS and
// refuses others (DNS rebinding) with 421.
func TestServeAdminListener(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	e := env(map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_ADMIN_ADDR": "127.0.0.1:0",
		"SWITCHBOARD_DATA_DIR": dir, "SWITCHBOARD_LOG_FORMAT": "json", "SWITCHBOARD_ADMIN_HOSTS": "metrics.internal"})
	lines, stop, logs := startServeLogs(t, e, 7)
	public := regexp.MustCompile(`^Switchboard is listening on (http://127\.0\.0\.1:\d+)$`).FindStringSubmatch(lines[0])
	admin := regexp.MustCompile(`^Admin listener \(metrics, pprof\): (http://127\.0\.0\.1:\d+)$`).FindStringSubmatch(lines[6])
	if public == nil || admin == nil {
		t.Fatalf("serve printed %q", lines)
	}
	key, _ := strings.CutPrefix(lines[4], "Admin API key (shown once, store it now): ")
	// One API call, so the request metrics have something to show.
	req, _ := http.NewRequest(http.MethodGet, public[1]+"/api/tenant", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if res, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		res.Body.Close()
	}
	get := func(url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	status, body := get(admin[1] + "/metrics")
	if status != http.StatusOK {
		t.Fatalf("admin /metrics: %d %s", status, body)
	}
	for _, want := range []string{"switchboard_mcp_sessions 0", "switchboard_audit_queue_depth ", `switchboard_admission_calls{state="running"} 0`, `go_sql_open_connections{db_name="main"}`,
		"go_goroutines ", "switchboard_draining 0", "switchboard_mcp_open_streams 0", `switchboard_throttle_refusals_total{kind="unknown_key"} 0`,
		`switchboard_http_responses_total{class="2xx",group="api"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("admin /metrics lacks %q", want)
		}
	}
	if status, _ := get(admin[1] + "/debug/pprof/"); status != http.StatusOK {
		t.Errorf("admin /debug/pprof/: %d", status)
	}
	for host, want := range map[string]int{"metrics.internal:9090": http.StatusOK, "attacker.example:9090": http.StatusMisdirectedRequest} {
		req, _ := http.NewRequest(http.MethodGet, admin[1]+"/metrics", nil)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("admin /metrics with Host %s: %d, want %d", host, res.StatusCode, want)
		}
	}
	for _, path := range []string{"/metrics", "/debug/pprof/"} {
		status, body := get(public[1] + path)
		if status != http.StatusNotFound || strings.Contains(body, "switchboard_") || strings.Contains(body, "goroutine") {
			t.Errorf("public %s: %d %.200s; want 404 without metrics or profiles", path, status, body)
		}
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d", code)
	}
	// The request's access log line is JSON and carries the caller's trace id, although
	// tracing is off.
	found := false
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["msg"] == "http request" && rec["route"] == "/api/tenant" {
			found = true
			if rec["trace_id"] != "4bf92f3577b34da6a3ce929d0e0e4736" {
				t.Errorf("the request's log line %s lacks the caller's trace id", line)
			}
		}
	}
	if !found {
		t.Errorf("no JSON access log line for /api/tenant in %s", logs.String())
	}
}

// TestJSONLogs checks that SWITCHBOARD_LOG_FORMAT=json writes one JSON object a line.
func TestJSONLogs(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	var stdout, stderr testlog.Buffer
	code := run(t.Context(), []string{"migrate"}, env(map[string]string{"SWITCHBOARD_DATA_DIR": dir,
		"SWITCHBOARD_LOG_FORMAT": "json", "SWITCHBOARD_DATABASE_URL": "sqlite:/proc/no-such-dir/switchboard.db"}), &stdout, &stderr)
	if code != exitFailed {
		t.Fatalf("migrate on a path that cannot exist exited %d; stderr %s", code, stderr.String())
	}
	var sawJSON bool
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue // the plain summary printed for people
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("log line %q is not JSON: %v", line, err)
			continue
		}
		if rec["level"] == "ERROR" && rec["msg"] == "migrate failed" && rec["err"] != nil {
			sawJSON = true
		}
	}
	if !sawJSON {
		t.Errorf("no JSON error line in %q", stderr.String())
	}
}
