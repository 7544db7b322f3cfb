package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowBody is a request that declared a body and sent one byte of it.
type slowBody struct {
	name string
	conn net.Conn
	br   *bufio.Reader
}

// openSlowBody sends a POST's headers, naming client in X-Forwarded-For and declaring
// length bytes of body, then one byte of it, and leaves the connection open.
func openSlowBody(t *testing.T, base, path, client string, length int, header map[string]string) *slowBody {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nX-Forwarded-For: %s\r\nContent-Length: %d\r\n", path, strings.TrimPrefix(base, "http://"), client, length)
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\nx")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		t.Fatal(err)
	}
	return &slowBody{name: fmt.Sprintf("%s from %s declaring %d bytes", path, client, length), conn: conn, br: bufio.NewReader(conn)}
}

// answer waits up to d for the server to answer or close the connection, and returns
// the status (0 when it closed without one), or false when it did neither.
func (s *slowBody) answer(d time.Duration) (int, bool) {
	_ = s.conn.SetReadDeadline(time.Now().Add(d))
	res, err := http.ReadResponse(s.br, nil)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return 0, false
		}
		return 0, true
	}
	res.Body.Close()
	return res.StatusCode, true
}

// TestServeSlowBodies holds open many requests that each declared a large body and
// sent one byte of it, from several client addresses, at every URL that reads a body
// before any API key: the OAuth token and registration endpoints, the sign-in form
// and a workflow's webhook. Meanwhile a REST tool call, an MCP initialize of 3.5 MB, a
// sign-in and a client registration are answered; a body declared longer than its URL takes
// is refused at once, an unsigned webhook delivery too, and the server ends every
// body still held when its read deadline passes.
func TestServeSlowBodies(t *testing.T) {
	t.Parallel()
	gh := newFakeGitHub(t)
	dir := filepath.Join(t.TempDir(), "data")
	e := env(map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:0", "SWITCHBOARD_DATA_DIR": dir, "SWITCHBOARD_LOG_LEVEL": "error",
		"SWITCHBOARD_TRUSTED_PROXIES": "127.0.0.1", "SWITCHBOARD_GITHUB_BASE_URL": gh.URL})
	lines, _ := startServe(t, e, 6)
	base, key, link := firstStart(t, lines)
	n := node{base: base}
	const formToken = "ffffffffffffffffffffffffffffffff"
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	postForm := func(path, client string, form url.Values) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", client)
		req.AddCookie(&http.Cookie{Name: "switchboard_form", Value: formToken})
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	const password = "a long enough password 42"
	if res := postForm(strings.TrimPrefix(link, base), "203.0.113.9", url.Values{"csrf": {formToken}, "password": {password}, "confirm": {password}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("set the admin's password: status %d", res.StatusCode)
	}
	if code := n.api(t, http.MethodPost, "/api/connections", key, `{"provider":"github","token":"ghp_slow"}`, nil); code != http.StatusCreated {
		t.Fatalf("connect GitHub: status %d", code)
	}
	def := `{"definition":"name: gh_hook\ntriggers:\n  - github: {events: [issues]}\nsteps:\n  - name: me\n    tool: github_get_me\n"}`
	if code := n.api(t, http.MethodPost, "/api/workflows", key, def, nil); code != http.StatusCreated {
		t.Fatalf("save a workflow with a webhook: status %d", code)
	}
	if code := n.api(t, http.MethodPut, "/api/workflows/gh_hook/webhooks/github", key, `{"secret":"gh-secret-0123456789abcdef"}`, nil); code != http.StatusOK {
		t.Fatalf("set the webhook's secret: status %d", code)
	}

	// Eight attacking addresses; from each, at each URL, a body declared as large as
	// the MCP URL takes, and one as large as the URL itself takes.
	signed := map[string]string{"Content-Type": "application/json", "X-GitHub-Event": "issues", "X-Hub-Signature-256": "sha256=" + strings.Repeat("0", 64)}
	targets := []struct {
		path   string
		most   int
		header map[string]string
	}{
		{"/oauth/token", 64 << 10, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		{"/oauth/register", 64 << 10, map[string]string{"Content-Type": "application/json"}},
		{"/signin", 64 << 10, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		{"/hooks/workflows/default/gh_hook/github", 1 << 20, signed},
	}
	var held, large []*slowBody
	for i := range 8 {
		client := fmt.Sprintf("198.51.100.%d", i+1)
		for _, tg := range targets {
			large = append(large, openSlowBody(t, base, tg.path, client, 4<<20, tg.header))
			held = append(held, openSlowBody(t, base, tg.path, client, tg.most, tg.header))
		}
	}
	unsigned := openSlowBody(t, base, "/hooks/workflows/default/gh_hook/github", "198.51.100.1", 1<<20, map[string]string{"Content-Type": "application/json"})
	for _, s := range large {
		if status, ok := s.answer(30 * time.Second); !ok || status != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: answered %v, status %d; want 413 before its body", s.name, ok, status)
		}
	}
	if status, ok := unsigned.answer(30 * time.Second); !ok || status != http.StatusUnauthorized {
		t.Errorf("%s without a signature: answered %v, status %d; want 401 before its body", unsigned.name, ok, status)
	}

	// While the others are held: a tool call, an MCP initialize, a sign-in and a client
	// registration from other addresses are answered.
	var out struct {
		Result map[string]any `json:"result"`
	}
	before := gh.uses("ghp_slow")
	if code := n.api(t, http.MethodPost, "/api/tools/github_get_me/call", key, `{"arguments":{}}`, &out); code != http.StatusOK || out.Result["login"] != "octocat" {
		t.Errorf("REST tool call: status %d, result %v", code, out.Result)
	}
	if gh.uses("ghp_slow") != before+1 {
		t.Errorf("the upstream got %d calls with the connection's token, want 1", gh.uses("ghp_slow")-before)
	}
	// The initialize carries 3.5 MB of padding: a large body, within the MCP URL's
	// bound, is still taken from a caller with a key.
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp/default", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"},"padding":"`+strings.Repeat("p", 3_500_000)+`"}}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), `"serverInfo"`) {
		t.Errorf("MCP initialize: status %d body %s", res.StatusCode, b)
	}
	signIn := postForm("/signin", "203.0.113.10", url.Values{"csrf": {formToken}, "tenant": {"default"}, "email": {"admin@localhost"}, "password": {password}})
	if signIn.StatusCode != http.StatusSeeOther || len(signIn.Cookies()) == 0 {
		t.Errorf("sign-in: status %d, cookies %v; want 303 with a session", signIn.StatusCode, signIn.Cookies())
	}
	res, err = http.Post(base+"/oauth/register", "application/json", strings.NewReader(`{"client_name":"c","redirect_uris":["http://127.0.0.1:9/cb"],"token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Errorf("client registration: status %d", res.StatusCode)
	}

	// The read deadline ends every body still held.
	var wg sync.WaitGroup
	for _, s := range held {
		wg.Go(func() {
			if _, ok := s.answer(time.Minute); !ok {
				t.Errorf("%s: still open after a minute", s.name)
			}
		})
	}
	wg.Wait()
}
