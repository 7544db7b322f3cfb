package browser

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/npmtest"
)

// clientPage serves the page of a browser MCP client at every path (its callback
// included): the client's code runs in it (browser/cors.mjs).
func clientPage(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><html lang=en><title>Browser MCP client</title><main><h1>Browser MCP client</h1></main></html>"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestBrowserCORS: in Chromium, a page of another loopback origin listed in
// SWITCHBOARD_ALLOWED_ORIGINS connects to the tenant URL as a browser MCP client
// through the hub's OAuth flow (registration, consent, code exchange, all from the
// page), reads the 401's challenge, lists the tools and calls one that reaches the
// fake GitHub; the same page from an origin not listed cannot call at all.
func TestBrowserCORS(t *testing.T) {
	t.Parallel()
	requireNode(t)
	requireChromium(t)
	dir := browserDir(t)
	npmtest.Install(t, dir)
	bin := buildServer(t)
	gh, _ := fakeGitHub(t)
	allowed, other := clientPage(t), clientPage(t)
	srv := startServer(t, bin, map[string]string{"SWITCHBOARD_GITHUB_BASE_URL": gh.URL, "SWITCHBOARD_ALLOWED_ORIGINS": allowed.URL})
	api := &apiClient{Base: srv.BaseURL, Key: srv.AdminKey}
	if status, body := api.Do(t, http.MethodPost, "/api/connections", map[string]string{"provider": "github", "token": githubToken}); status != http.StatusCreated {
		t.Fatalf("connect github: status %d, body %s", status, body)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var sum struct {
		OK       bool     `json:"ok"`
		Failures []string `json:"failures"`
		Steps    []string `json:"steps"`
		Allowed  struct {
			Error      string   `json:"error"`
			AnonStatus int      `json:"anon_status"`
			Challenge  string   `json:"challenge"`
			SessionID  string   `json:"session_id"`
			Tools      []string `json:"tools"`
			CallError  bool     `json:"call_error"`
			CallText   string   `json:"call_text"`
		} `json:"allowed"`
		Other struct {
			Error string `json:"error"`
		} `json:"other"`
	}
	err, stderr := runScript(ctx, t, dir, "cors.mjs", []string{"BASE_URL=" + srv.BaseURL, "ADMIN_LINK=" + srv.AdminLink, "ALLOWED_ORIGIN=" + allowed.URL, "OTHER_ORIGIN=" + other.URL,
		"TOOL=github_get_me", "CHROMIUM=" + chromiumPath}, &sum)
	t.Logf("cors.mjs steps: %s", strings.Join(sum.Steps, "; "))
	if !sum.OK || err != nil {
		t.Fatalf("the browser run failed (exit %v):\n%s\nstderr:\n%s", err, strings.Join(sum.Failures, "\n"), stderr)
	}
	a := sum.Allowed
	if a.Error != "" {
		t.Fatalf("the client on the allowed origin failed: %s", a.Error)
	}
	if a.AnonStatus != http.StatusUnauthorized || !strings.Contains(a.Challenge, "resource_metadata=") {
		t.Errorf("without a credential the page saw status %d and WWW-Authenticate %q; want 401 with a readable challenge naming the resource metadata", a.AnonStatus, a.Challenge)
	}
	if a.SessionID == "" {
		t.Error("the page could not read Mcp-Session-Id from initialize's answer")
	}
	if !slices.Contains(a.Tools, "github_get_me") {
		t.Errorf("tools/list from the page: %v; want github_get_me among them", a.Tools)
	}
	if a.CallError || !strings.Contains(a.CallText, githubLogin) {
		t.Errorf("github_get_me from the page: error %v, text %q; want the fake GitHub's user %s", a.CallError, a.CallText, githubLogin)
	}
	if !strings.Contains(sum.Other.Error, "Failed to fetch") {
		t.Errorf("the page on an origin not listed: error %q; want the browser to refuse the call (Failed to fetch)", sum.Other.Error)
	}
}
