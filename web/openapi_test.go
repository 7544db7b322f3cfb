package web_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestOpenAPIForm: the Integrations page loads openapi.js after app.js (the form that
// adds an API by its OpenAPI description, and the list of the workspace's), and no other
// page does; the script posts to /api/openapi-providers with the fields the API takes
// and stays small.
func TestOpenAPIForm(t *testing.T) {
	t.Parallel()
	srv, acc := newServer(t, "https://hub.example.com")
	token := acc.session(t)
	res, js := do(t, client(nil), http.MethodGet, srv.URL+"/static/openapi.js", nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("openapi.js answered %d", res.StatusCode)
	}
	for _, want := range []string{"'/api/openapi-providers'", "'POST'", "'DELETE'", "name: 'url'", "name: 'description'", "name: 'base_url'", "name: 'auth'", "name: 'client_secret'", "err.field"} {
		if !strings.Contains(js, want) {
			t.Errorf("openapi.js lacks %s", want)
		}
	}
	if n := gzipped(t, js); n > 3000 {
		t.Errorf("openapi.js is %d bytes gzipped, want at most 3,000", n)
	}
	script := regexp.MustCompile(`<script src="/static/app.js\?v=[0-9a-f]{16}" defer></script>\s*<script src="/static/openapi.js\?v=[0-9a-f]{16}" defer></script>`)
	_, body := do(t, client(nil), http.MethodGet, srv.URL+"/", nil, sessionCookie(token))
	if !script.MatchString(body) || !strings.Contains(body, `id="remote"`) {
		t.Errorf("the Integrations page does not load openapi.js after app.js, or has no #remote section to put its own after")
	}
	for _, path := range []string{"/agents", "/settings", "/workflows"} {
		if _, body := do(t, client(nil), http.MethodGet, srv.URL+path, nil, sessionCookie(token)); strings.Contains(body, "openapi.js") {
			t.Errorf("%s loads openapi.js", path)
		}
	}
}

// TestDocsLinkIsWeb: the tool page links a tool's documentation only when its URL is an
// http or https URL (an API's description supplies it), never as a javascript: link.
func TestDocsLinkIsWeb(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, "https://hub.example.com")
	_, js := do(t, client(nil), http.MethodGet, srv.URL+"/static/app.js", nil)
	guarded := "/^https?:\\/\\//i.test(op.docs_url || '') ? el('p', { class: 'small' }, el('a', { href: op.docs_url"
	if strings.Count(js, "href: op.docs_url") != 1 || !strings.Contains(js, guarded) {
		t.Errorf("app.js links op.docs_url without checking that it is an http or https URL")
	}
}
