package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-hub/switchboard/keyring"
)

// readyz returns /readyz's status and its list of differing peers' settings.
func readyz(t *testing.T, base string) (int, [][]string) {
	t.Helper()
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var body struct {
		Status         string `json:"status"`
		SettingsDiffer []struct {
			Node     string   `json:"node"`
			Settings []string `json:"settings"`
		} `json:"settings_differ"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("readyz answered %s: %v", b, err)
	}
	var out [][]string
	for _, d := range body.SettingsDiffer {
		out = append(out, d.Settings)
	}
	return res.StatusCode, out
}

// TestReadyzComparesNodes runs two nodes on one database, the second without the
// GitHub OAuth app the first has: each one's /readyz stays 200 and names the setting
// that differs; once the second stops, the first no longer compares with it.
func TestReadyzComparesNodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := func(name string, extra map[string]string, lines int) (string, func() int) {
		vars := map[string]string{
			"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": filepath.Join(dir, name),
			"SWITCHBOARD_DATABASE_URL": "sqlite:" + filepath.Join(dir, "shared.db"), "SWITCHBOARD_KEY_FILE": filepath.Join(dir, "master.key"),
			"SWITCHBOARD_PUBLIC_URL": "https://hub.example.com", "SWITCHBOARD_LOG_LEVEL": "error",
		}
		for k, v := range extra {
			vars[k] = v
		}
		out, stop := startServe(t, env(vars), lines)
		m := regexp.MustCompile(`^Switchboard is listening on (http://127\.0\.0\.1:\d+)$`).FindStringSubmatch(out[0])
		if m == nil {
			t.Fatalf("first line %q", out[0])
		}
		return m[1], stop
	}
	a, _ := start("a", map[string]string{"SWITCHBOARD_OAUTH_GITHUB_CLIENT_ID": "Iv1.fleet", "SWITCHBOARD_OAUTH_GITHUB_CLIENT_SECRET": "s3cret"}, 5)
	b, stopB := start("b", nil, 4)

	want := [][]string{{"oauth.github.client_id"}}
	for _, n := range []struct{ name, base string }{{"A", a}, {"B", b}} {
		status, got := readyz(t, n.base)
		if status != http.StatusOK {
			t.Errorf("node %s's readyz: status %d, want 200", n.name, status)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("node %s's differing settings (-want +got):\n%s", n.name, diff)
		}
	}
	if code := stopB(); code != exitOK {
		t.Fatalf("node B exit %d", code)
	}
	if status, got := readyz(t, a); status != http.StatusOK || got != nil {
		t.Errorf("node A's readyz after B stopped: %d %v, want 200 and no differences", status, got)
	}
}

// TestRedisSetting checks what a node publishes of its Redis URL: where it is, never
// its password, so that /readyz shows a node that does not share the fleet's limits.
func TestRedisSetting(t *testing.T) {
	t.Parallel()
	tests := []struct{ url, want string }{
		{"", "none"},
		{"redis://redis:6379/0", "redis://redis:6379/0"},
		{"rediss://default:s3cret@cache.internal:6380/2", "rediss://cache.internal:6380/2"},
	}
	kr, err := keyring.LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		settings, err := nodeSettings(config{RedisURL: tc.url}, "https://hub.example.com", kr)(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, settings["redis"]); diff != "" {
			t.Errorf("redis setting of %q (-want +got):\n%s", tc.url, diff)
		}
	}
}
