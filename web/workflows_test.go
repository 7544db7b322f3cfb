package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestWorkflowPages: the Workflows section's pages need a session, render their shell
// with the path's name or run id escaped, mark Workflows in the navigation, and load
// workflows.js after app.js; no other page loads it. Each weighs under 100 KB with the
// stylesheet and both scripts as a browser receives them.
func TestWorkflowPages(t *testing.T) {
	t.Parallel()
	srv, acc := newServer(t, "https://hub.example.com")
	token := acc.session(t)
	_, css := do(t, client(nil), http.MethodGet, srv.URL+"/static/style.css", nil)
	_, app := do(t, client(nil), http.MethodGet, srv.URL+"/static/app.js", nil)
	res, wf := do(t, client(nil), http.MethodGet, srv.URL+"/static/workflows.js", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(wf, "/api/workflows") || !strings.Contains(app, "window.Switchboard") {
		t.Fatalf("workflows.js answered %d, or app.js does not share its helpers", res.StatusCode)
	}
	script := regexp.MustCompile(`<script src="/static/app.js\?v=[0-9a-f]{16}" defer></script>\s*<script src="/static/workflows.js\?v=[0-9a-f]{16}" defer></script>`)
	for _, tc := range []struct{ path, want string }{
		{"/workflows", `id="workflow-list"`},
		{"/workflows/new", `data-param=""`},
		{"/workflows/issue_to_slack", `data-param="issue_to_slack"`},
		{"/workflows/%22%3E%3Cscript%3E", `data-param="&#34;&gt;&lt;script&gt;"`},
		{"/workflow-runs/run_x1", `data-param="run_x1"`},
	} {
		res, _ := do(t, client(nil), http.MethodGet, srv.URL+tc.path, nil)
		if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/signin?next=") {
			t.Errorf("%s without a session: %d %s, want 303 to sign in", tc.path, res.StatusCode, res.Header.Get("Location"))
		}
		res, body := do(t, client(nil), http.MethodGet, srv.URL+tc.path, nil, sessionCookie(token))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", tc.path, res.StatusCode)
		}
		for _, want := range []string{tc.want, `<a href="/workflows" aria-current="page">Workflows</a>`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", tc.path, want)
			}
		}
		if !script.MatchString(body) {
			t.Errorf("%s does not load workflows.js after app.js", tc.path)
		}
		if strings.Contains(body, "<script>") || !strings.HasPrefix(res.Header.Get("Content-Security-Policy"), "default-src 'self';") {
			t.Errorf("%s: inline script, or CSP %q", tc.path, res.Header.Get("Content-Security-Policy"))
		}
		if total := len(body) + gzipped(t, css) + gzipped(t, app) + gzipped(t, wf); total >= 100_000 {
			t.Errorf("%s weighs %d bytes with its assets, want under 100 KB", tc.path, total)
		}
	}
	for _, path := range []string{"/", "/agents", "/settings"} {
		_, body := do(t, client(nil), http.MethodGet, srv.URL+path, nil, sessionCookie(token))
		if strings.Contains(body, "workflows.js") || strings.Contains(body, `<a href="/workflows" aria-current`) {
			t.Errorf("%s loads workflows.js or marks Workflows as the current page", path)
		}
	}
	_, signin := do(t, client(nil), http.MethodGet, srv.URL+"/signin?next="+url.QueryEscape("/workflows"), nil)
	if strings.Contains(signin, "workflows.js") {
		t.Error("the sign-in page loads workflows.js")
	}
}
