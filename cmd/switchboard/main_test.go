package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/internal/testlog"
)

// env returns an environment (KEY=VALUE entries) of a map, so tests never read the
// process environment. A serve stops at once (SWITCHBOARD_DRAIN_LEAD=0s) unless m says
// otherwise: no balancer watches the tests' nodes.
func env(m map[string]string) []string {
	out := []string{"SWITCHBOARD_DRAIN_LEAD=0s"}
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{name: "help", args: []string{"-h"}, wantCode: exitOK, wantStdout: []string{"switchboard migrate", "tenant create --slug SLUG"}},
		{name: "version", args: []string{"version"}, wantCode: exitOK, wantStdout: []string{"switchboard "}},
		{name: "unknown command", args: []string{"start"}, wantCode: exitUsage, wantStderr: []string{`unknown command "start"`, "Usage:"}},
		{name: "bad addr", args: []string{"serve"}, env: map[string]string{"SWITCHBOARD_ADDR": "nope", "SWITCHBOARD_DATA_DIR": dir}, wantCode: exitUsage, wantStderr: []string{"SWITCHBOARD_ADDR"}},
		{name: "bad addr with the default command", env: map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:99999", "SWITCHBOARD_DATA_DIR": dir}, wantCode: exitUsage, wantStderr: []string{"SWITCHBOARD_ADDR"}},
		{name: "serve takes no arguments", args: []string{"serve", "--port", "80"}, env: map[string]string{"SWITCHBOARD_DATA_DIR": dir}, wantCode: exitUsage, wantStderr: []string{"takes no arguments"}},
		{name: "tenant without create", args: []string{"tenant", "list"}, env: map[string]string{"SWITCHBOARD_DATA_DIR": dir}, wantCode: exitUsage, wantStderr: []string{"tenant create"}},
		{name: "tenant create without slug", args: []string{"tenant", "create", "--name", "A", "--owner-email", "a@a.test"}, env: map[string]string{"SWITCHBOARD_DATA_DIR": dir}, wantCode: exitUsage, wantStderr: []string{"--slug is required"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, env(tc.env), &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.wantCode, stderr.String())
			}
			for _, w := range tc.wantStdout {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

func TestMigrateAndTenantCreate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	e := env(map[string]string{"SWITCHBOARD_DATA_DIR": dir, "SWITCHBOARD_PUBLIC_URL": "https://hub.example.com"})
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"migrate"}, e, &stdout, &stderr); code != exitOK {
		t.Fatalf("migrate: exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "switchboard.db")); err != nil {
		t.Fatalf("migrate made no database: %v", err)
	}
	// Migrating again is a no-op.
	if code := run(context.Background(), []string{"migrate"}, e, &stdout, &stderr); code != exitOK {
		t.Fatalf("second migrate: exit %d: %s", code, stderr.String())
	}

	stdout.Reset()
	args := []string{"tenant", "create", "--slug", "acme", "--name", "Acme", "--owner-email", "ada@acme.test"}
	if code := run(context.Background(), args, e, &stdout, &stderr); code != exitOK {
		t.Fatalf("tenant create: exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, w := range []string{"Tenant acme (ten_", "MCP URL (tenant acme): https://hub.example.com/mcp/acme", "Owner API key (shown once, store it now): sbk_", "Owner's UI password link (one use, 24 h): https://hub.example.com/invite/sbi_"} {
		if !strings.Contains(out, w) {
			t.Errorf("tenant create output lacks %q:\n%s", w, out)
		}
	}
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{name: "taken slug", args: args, wantStderr: "slug"},
		{name: "bad email", args: []string{"tenant", "create", "--slug", "beta", "--name", "Beta", "--owner-email", "nobody"}, wantStderr: "--owner-email"},
		{name: "bad slug", args: []string{"tenant", "create", "--slug", "B", "--name", "Beta", "--owner-email", "a@b.test"}, wantStderr: "slug"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(context.Background(), tc.args, e, io.Discard, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr lacks %q: %s", tc.wantStderr, stderr.String())
			}
		})
	}
}

// TestServe starts the server in-process twice on one data directory: the first start
// prints the admin key, which works; the second says the key was shown before.
func TestServe(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	e := env(map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": dir, "SWITCHBOARD_LOG_LEVEL": "error"})

	lines, stop := startServe(t, e, 6)
	listen := regexp.MustCompile(`^Switchboard is listening on (http://127\.0\.0\.1:\d+)$`).FindStringSubmatch(lines[0])
	if listen == nil {
		t.Fatalf("first line %q", lines[0])
	}
	base := listen[1]
	key, ok := strings.CutPrefix(lines[4], "Admin API key (shown once, store it now): ")
	if !ok || !strings.HasPrefix(key, "sbk_") {
		t.Fatalf("fifth line %q", lines[4])
	}
	wantData := "Data: SQLite database " + filepath.Join(dir, "switchboard.db") + "; credentials sealed with the key file " +
		filepath.Join(dir, "master.key") + " (back it up: without it stored tokens cannot be opened)"
	if diff := cmp.Diff([]string{wantData, "UI: " + base + "/", "MCP URL (tenant default): " + base + "/mcp/default"}, lines[1:4]); diff != "" {
		t.Errorf("printed lines (-want +got):\n%s", diff)
	}
	link, ok := strings.CutPrefix(lines[5], "Set the admin's UI password (admin@localhost, one use, 24 h): ")
	if !ok || !strings.HasPrefix(link, base+"/invite/sbi_") {
		t.Fatalf("sixth line %q", lines[5])
	}
	// The URL is recorded for the commands that print links.
	if b, err := os.ReadFile(filepath.Join(dir, "public-url")); err != nil || string(b) != base+"\n" {
		t.Errorf("public-url holds %q (%v), want %q", b, err, base+"\n")
	}
	for _, f := range []struct {
		name string
		mode os.FileMode
	}{{"master.key", 0o600}, {"switchboard.db", 0}} {
		st, err := os.Stat(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if f.mode != 0 && st.Mode().Perm() != f.mode {
			t.Errorf("%s mode %v, want %v", f.name, st.Mode().Perm(), f.mode)
		}
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("data dir: %v, mode %v; want 0700", err, st.Mode().Perm())
	}

	checks := []struct {
		name, path, key string
		wantStatus      int
		wantBody        string
	}{
		{name: "healthz", path: "/healthz", wantStatus: http.StatusOK, wantBody: `"ok"`},
		{name: "readyz", path: "/readyz", wantStatus: http.StatusOK, wantBody: `"ok"`},
		{name: "tenant", path: "/api/tenant", key: key, wantStatus: http.StatusOK, wantBody: `"mcp_url":"` + base + `/mcp/default"`},
		{name: "providers", path: "/api/providers", key: key, wantStatus: http.StatusOK, wantBody: `"name":"github"`},
		{name: "web page signed out is the sign-in form", path: "/", wantStatus: http.StatusOK, wantBody: `<input id="tenant" name="tenant" value="default"`},
		{name: "the admin's password link", path: strings.TrimPrefix(link, base), wantStatus: http.StatusOK, wantBody: `<strong id="invite-email">admin@localhost</strong>`},
		{name: "MCP needs a key", path: "/mcp/default", wantStatus: http.StatusUnauthorized, wantBody: `"unauthorized"`},
		{name: "MCP URL's protected resource metadata", path: "/.well-known/oauth-protected-resource/mcp/default", wantStatus: http.StatusOK, wantBody: `"resource":"` + base + `/mcp/default"`},
		{name: "unknown agent's metadata", path: "/.well-known/oauth-protected-resource/mcp/default/agents/agt_nosuch", wantStatus: http.StatusNotFound, wantBody: `"not_found"`},
		{name: "unknown API path", path: "/api/nope", key: key, wantStatus: http.StatusNotFound, wantBody: `"not_found"`},
	}
	for _, c := range checks {
		req, _ := http.NewRequest(http.MethodGet, base+c.path, nil)
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.wantStatus || !strings.Contains(string(b), c.wantBody) {
			t.Errorf("%s: status %d body %s; want %d with %s", c.name, res.StatusCode, b, c.wantStatus, c.wantBody)
		}
	}
	// The 401 points OAuth clients at the metadata, which names this server as the
	// authorization server; its endpoints are mounted.
	res, err := http.Get(base + "/mcp/default")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got, want := res.Header.Get("WWW-Authenticate"), `Bearer realm="switchboard", resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp/default", scope="mcp"`; got != want {
		t.Errorf("WWW-Authenticate %q, want %q", got, want)
	}
	for path, want := range map[string]string{
		"/.well-known/oauth-protected-resource/mcp/default": `"authorization_servers":["` + base + `"]`,
		"/.well-known/oauth-authorization-server":           `"token_endpoint":"` + base + `/oauth/token"`,
	} {
		res, err = http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: status %d body %s; want %s", path, res.StatusCode, b, want)
		}
	}
	res, err = http.Post(base+"/oauth/register", "application/json", strings.NewReader(`{"client_name":"c","redirect_uris":["http://127.0.0.1:9/cb"],"token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || !strings.Contains(string(b), `"client_id":"cli_`) {
		t.Errorf("POST /oauth/register: status %d body %s", res.StatusCode, b)
	}
	// MCP initialize through the mounted adapter.
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp/default", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), `"serverInfo"`) {
		t.Errorf("MCP initialize: status %d body %s", res.StatusCode, b)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d", code)
	}

	lines, stop = startServe(t, e, 5)
	if !strings.HasPrefix(lines[1], "Data: ") || !strings.Contains(lines[4], "shown on first start") || strings.Contains(strings.Join(lines, "\n"), "sbk_") {
		t.Errorf("second start printed %q", lines)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("second serve exit %d", code)
	}
}

// startServe runs `serve` until stop is called and returns its first n lines of
// output; stop cancels it and returns its exit code.
func startServe(t testing.TB, environ []string, n int) ([]string, func() int) {
	t.Helper()
	lines, stop, _ := startServeLogs(t, environ, n)
	return lines, stop
}

// startServeLogs is startServe that also returns serve's stderr (its logs). The
// built-in catalog is off unless environ sets it: its load in the background would
// take CPU from every other test of the package (its own tests turn it on).
func startServeLogs(t testing.TB, environ []string, n int) ([]string, func() int, *testlog.Buffer) {
	t.Helper()
	if !slices.ContainsFunc(environ, func(kv string) bool { return strings.HasPrefix(kv, "SWITCHBOARD_CATALOG=") }) {
		environ = append(slices.Clip(environ), "SWITCHBOARD_CATALOG=off")
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr := &testlog.Buffer{}
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"serve"}, environ, pw, stderr)
		pw.Close()
		done <- code
	}()
	// The first n lines, read in the background: a serve that stops printing fails the
	// test after a minute instead of holding it.
	read := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		var lines []string
		for len(lines) < n && sc.Scan() {
			lines = append(lines, sc.Text())
		}
		read <- lines
		_, _ = io.Copy(io.Discard, pr)
	}()
	var lines []string
	select {
	case lines = <-read:
	case <-time.After(time.Minute):
		cancel()
		t.Fatalf("serve printed fewer than %d lines in a minute; stderr %s", n, stderr.String())
	}
	if len(lines) < n {
		cancel()
		t.Fatalf("serve printed %q; stderr %s", lines, stderr.String())
	}
	stopped := false
	stop := func() int {
		if stopped {
			return exitOK
		}
		stopped = true
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(time.Minute): // a call under way may hold the drain for 30 s
			t.Fatal("serve did not stop within a minute of cancellation")
			return -1
		}
	}
	t.Cleanup(func() { stop() })
	return lines, stop, stderr
}

// TestUserPasswordLink prints a one-time link that sets a user's UI password, and
// refuses unknown users and bad command lines.
func TestUserPasswordLink(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	e := env(map[string]string{"SWITCHBOARD_DATA_DIR": dir, "SWITCHBOARD_PUBLIC_URL": "https://hub.example.com/"})
	var stdout, stderr bytes.Buffer
	args := []string{"tenant", "create", "--slug", "acme", "--name", "Acme", "--owner-email", "ada@acme.test"}
	if code := run(context.Background(), args, e, &stdout, &stderr); code != exitOK {
		t.Fatalf("tenant create: exit %d: %s", code, stderr.String())
	}
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "link", args: []string{"user", "password-link", "--tenant", "acme", "--email", "Ada@acme.test"}, wantCode: exitOK, wantStdout: "Password link for ada@acme.test in tenant acme (one use, until "},
		{name: "unknown user", args: []string{"user", "password-link", "--tenant", "acme", "--email", "bob@acme.test"}, wantCode: exitUsage, wantStderr: "user not found"},
		{name: "unknown tenant", args: []string{"user", "password-link", "--tenant", "nope", "--email", "ada@acme.test"}, wantCode: exitUsage, wantStderr: "tenant not found"},
		{name: "no email", args: []string{"user", "password-link", "--tenant", "acme"}, wantCode: exitUsage, wantStderr: "--email is required"},
		{name: "unknown sub-command", args: []string{"user", "delete"}, wantCode: exitUsage, wantStderr: "the only sub-command is password-link"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tc.args, e, &stdout, &stderr); code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) || !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Fatalf("stdout %q stderr %q; want %q and %q", stdout.String(), stderr.String(), tc.wantStdout, tc.wantStderr)
			}
			if tc.wantCode == exitOK && !regexp.MustCompile(`: https://hub\.example\.com/invite/sbi_[0-9a-z]+\n$`).MatchString(stdout.String()) {
				t.Errorf("the link is not at the end of %q", stdout.String())
			}
		})
	}
}
