package web_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/web"
)

// fakeAccounts is an in-memory user store: one user, alice@acme.test in tenant acme
// with password "correct horse battery", and one link per token.
type fakeAccounts struct {
	mu       sync.Mutex
	sessions map[string]switchboard.Principal
	links    map[string]web.Link
	used     map[string]string // link token → password it set
	signIns  []string
}

const (
	goodPassword = "correct horse battery"
	linkToken    = "sbi_goodlink"
	lockedEmail  = "locked@acme.test" // an account the store throttles
)

func newFakeAccounts() *fakeAccounts {
	return &fakeAccounts{
		sessions: map[string]switchboard.Principal{},
		links:    map[string]web.Link{linkToken: {TenantSlug: "acme", TenantName: "Acme", Email: "bob@acme.test", NewUser: true}},
		used:     map[string]string{},
	}
}

func (f *fakeAccounts) SignIn(_ context.Context, slug, email, pw string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signIns = append(f.signIns, slug+" "+email)
	if email == lockedEmail {
		// What the store answers for an account that failed too often (package limits).
		return "", &switchboard.Error{Code: switchboard.CodeRateLimited, RetryAfter: 90 * time.Second,
			Message: "too many failed sign-ins to this account; try again in 2 minutes, or ask an admin for a password link"}
	}
	if slug != "acme" || email != "alice@acme.test" || pw != goodPassword {
		return "", &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "wrong"}
	}
	token := "sbs_" + switchboard.RandomToken(8)
	f.sessions[token] = switchboard.Principal{TenantID: "ten_acme", TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: "usr_alice", Role: switchboard.RoleAdmin}
	return token, nil
}

func (f *fakeAccounts) SignOut(_ context.Context, token string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.sessions, token)
	return nil
}

func (f *fakeAccounts) Session(_ context.Context, token string) (switchboard.Principal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.sessions[token]
	if !ok {
		return p, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "signed out"}
	}
	return p, nil
}

// CSRFToken is "csrf-" and the hex SHA-256 of the token: derived, and not the token.
func (f *fakeAccounts) CSRFToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "csrf-" + hex.EncodeToString(sum[:])
}

// Email is alice's for her sessions and bob's for his.
func (f *fakeAccounts) Email(_ context.Context, p switchboard.Principal) (string, error) {
	if p.UserID == "usr_bob" {
		return "bob@acme.test", nil
	}
	return "alice@acme.test", nil
}

func (f *fakeAccounts) Link(_ context.Context, token string) (web.Link, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.links[token]
	if !ok {
		return web.Link{}, &switchboard.Error{Code: switchboard.CodeNotFound, Message: "this link is not valid: it was already used, it expired, or it was mistyped; ask an admin for a new one"}
	}
	return l, nil
}

func (f *fakeAccounts) UseLink(_ context.Context, token, pw string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(pw) < 10 {
		return "", switchboard.Invalid("password", "must be at least 10 characters")
	}
	l, ok := f.links[token]
	if !ok {
		return "", &switchboard.Error{Code: switchboard.CodeNotFound, Message: "this link is not valid"}
	}
	delete(f.links, token)
	f.used[token] = pw
	s := "sbs_" + switchboard.RandomToken(8)
	f.sessions[s] = switchboard.Principal{TenantID: "ten_acme", TenantSlug: l.TenantSlug, Kind: switchboard.PrincipalUser, UserID: "usr_bob", Role: switchboard.RoleMember}
	return s, nil
}

// session starts a session for alice directly.
func (f *fakeAccounts) session(t *testing.T) string {
	t.Helper()
	token, err := f.SignIn(context.Background(), "acme", "alice@acme.test", goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func newServer(t *testing.T, publicURL string) (*httptest.Server, *fakeAccounts) {
	t.Helper()
	acc := newFakeAccounts()
	h, err := web.Handler(web.Options{PublicURL: publicURL, DefaultTenant: "acme", Version: "v1.2.3", Accounts: acc})
	if err != nil {
		t.Fatalf("Handler: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, acc
}

// client does not follow redirects, so tests see them.
func client(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func do(t *testing.T, c *http.Client, method, u string, form url.Values, cookies ...*http.Cookie) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, ck := range cookies {
		req.AddCookie(ck)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func sessionCookie(token string) *http.Cookie {
	return &http.Cookie{Name: api.SessionCookie, Value: token}
}

// TestSignInKeepsTheDeepLinksQuery: a signed-out browser sent to sign in from a page
// with a query (Activity's filters) comes back to the page with the query.
func TestSignInKeepsTheDeepLinksQuery(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, "http://127.0.0.1:8080")
	const deep = "/activity?tool=create_iss&outcome=ok"
	res, _ := do(t, client(nil), http.MethodGet, srv.URL+deep, nil)
	if want := "/signin?next=" + url.QueryEscape(deep); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
		t.Fatalf("status %d, Location %q; want 303 to %q", res.StatusCode, res.Header.Get("Location"), want)
	}
	_, page := do(t, client(nil), http.MethodGet, srv.URL+res.Header.Get("Location"), nil)
	if !strings.Contains(page, `name="next" value="`+html.EscapeString(deep)+`"`) {
		t.Errorf("the sign-in form does not carry %q on:\n%s", deep, page)
	}
}

func TestAppPagesNeedASession(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, "http://127.0.0.1:8080")
	for _, path := range []string{"/", "/agents", "/agents/new", "/agents/agt_1", "/tools/github_get_issue", "/activity", "/settings"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			for _, ck := range [][]*http.Cookie{nil, {sessionCookie("sbs_unknown")}} {
				res, _ := do(t, client(nil), http.MethodGet, srv.URL+path, nil, ck...)
				if res.StatusCode != http.StatusSeeOther {
					t.Fatalf("status %d, want 303", res.StatusCode)
				}
				if diff := cmp.Diff("/signin?next="+url.QueryEscape(path), res.Header.Get("Location")); diff != "" {
					t.Errorf("redirect (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestAppPages(t *testing.T) {
	t.Parallel()
	srv, acc := newServer(t, "https://hub.example.com/")
	token := acc.session(t)
	tests := []struct {
		name string
		path string
		want []string
	}{
		{name: "integrations", path: "/", want: []string{`<section id="connections"`, `id="catalog"`, `id="connect-dialog"`, "https://hub.example.com/mcp/acme", "needs_reconnect", "Reconnect"}},
		{name: "agents", path: "/agents", want: []string{`id="agent-list"`, `href="/agents/new"`}},
		{name: "new agent", path: "/agents/new", want: []string{`id="tool-picker"`, `id="token-estimate"`, `value="destructive"`, `value="search"`, `data-param=""`}},
		{name: "an agent", path: "/agents/agt_x1", want: []string{`data-param="agt_x1"`, `id="agent-mcp-url"`}},
		{name: "tool", path: "/tools/github_get_issue", want: []string{`data-param="github_get_issue"`, `id="try-form"`}},
		{name: "tool name is escaped", path: "/tools/%22%3E%3Cscript%3E", want: []string{`data-param="&#34;&gt;&lt;script&gt;"`}},
		{name: "activity", path: "/activity", want: []string{`id="audit-filters"`, `id="f-outcome"`, `id="runs"`, `id="audit-detail"`}},
		{name: "settings", path: "/settings", want: []string{`id="key-form"`, `id="invite-form"`, `value="https://hub.example.com/mcp/acme"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, body := do(t, client(nil), http.MethodGet, srv.URL+tc.path, nil, sessionCookie(token))
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", res.StatusCode)
			}
			common := []string{
				`<meta name="csrf-token" content="` + acc.CSRFToken(token) + `">`,
				`<script src="/static/app.js?v=`,
				`<form method="post" action="/signout"`,
				`name="csrf" value="` + acc.CSRFToken(token) + `"`,
				`<span id="who-email">alice@acme.test</span> · acme · admin`,
				"Switchboard v1.2.3",
			}
			for _, w := range append(common, tc.want...) {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			if strings.Contains(body, token) {
				t.Error("the page holds the session token")
			}
			if strings.Contains(body, "<script>") || strings.Contains(body, " onclick=") {
				t.Error("the page has inline script, which its Content-Security-Policy forbids")
			}
			for k, want := range map[string]string{
				"Content-Type":            "text/html; charset=utf-8",
				"Cache-Control":           "no-store",
				"X-Content-Type-Options":  "nosniff",
				"Referrer-Policy":         "no-referrer",
				"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
			} {
				if diff := cmp.Diff(want, res.Header.Get(k)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", k, diff)
				}
			}
		})
	}
}

// TestConnectionsAnchor checks the target of the link the MCP adapter sends with a
// "reconnect" tool error (PublicURL + "/#connections"): signed out, it leads to sign-in
// and back to /; signed in, exactly one element of / has id="connections", the section
// listing connected accounts with their reconnect action.
func TestConnectionsAnchor(t *testing.T) {
	t.Parallel()
	srv, acc := newServer(t, "https://hub.example.com")
	res, _ := do(t, client(nil), http.MethodGet, srv.URL+"/", nil)
	if loc := res.Header.Get("Location"); loc != "/signin?next=%2F" {
		t.Fatalf("signed out, / redirects to %q", loc)
	}
	_, body := do(t, client(nil), http.MethodGet, srv.URL+"/", nil, sessionCookie(acc.session(t)))
	if n := strings.Count(body, `id="connections"`); n != 1 {
		t.Fatalf("the page has %d elements with id=\"connections\", want 1", n)
	}
	start := strings.Index(body, `<section id="connections"`)
	if start < 0 {
		t.Fatal(`id="connections" is not on a <section>`)
	}
	section := body[start:]
	section = section[:strings.Index(section, "</section>")]
	for _, want := range []string{"Connected accounts", "Reconnect", "needs_reconnect", `id="connection-list"`} {
		if !strings.Contains(section, want) {
			t.Errorf("the connections section lacks %q", want)
		}
	}
}

func TestStaticAndRoutes(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, "http://127.0.0.1:8080")
	tests := []struct {
		name        string
		method      string
		path        string
		wantStatus  int
		wantType    string
		wantContain string
	}{
		{name: "stylesheet", method: http.MethodGet, path: "/static/style.css", wantStatus: http.StatusOK, wantType: "text/css; charset=utf-8", wantContain: "--accent"},
		{name: "script", method: http.MethodGet, path: "/static/app.js", wantStatus: http.StatusOK, wantType: "text/javascript; charset=utf-8", wantContain: "X-CSRF-Token"},
		{name: "sign-in page", method: http.MethodGet, path: "/signin", wantStatus: http.StatusOK, wantType: "text/html; charset=utf-8", wantContain: `value="acme"`},
		{name: "unknown page", method: http.MethodGet, path: "/nope", wantStatus: http.StatusNotFound, wantType: "text/html; charset=utf-8", wantContain: "<h1>Page not found</h1>"},
		{name: "unknown static file", method: http.MethodGet, path: "/static/nope.js", wantStatus: http.StatusNotFound},
		{name: "templates are not served", method: http.MethodGet, path: "/static/../templates/layout.html", wantStatus: http.StatusNotFound},
		{name: "post to a page", method: http.MethodPost, path: "/settings", wantStatus: http.StatusMethodNotAllowed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// This client follows redirects: ServeMux cleans /static/../x to /x first.
			res, body := do(t, srv.Client(), tc.method, srv.URL+tc.path, nil)
			if res.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.wantStatus)
			}
			if tc.wantType != "" {
				if diff := cmp.Diff(tc.wantType, res.Header.Get("Content-Type")); diff != "" {
					t.Errorf("content type (-want +got):\n%s", diff)
				}
			}
			if !strings.Contains(body, tc.wantContain) {
				t.Errorf("body lacks %q", tc.wantContain)
			}
		})
	}
}

// TestPageWeight holds every page, with the stylesheet and script it loads as a
// browser receives them (gzip-compressed), under 100 KB, and checks that nothing is
// loaded from another site. The browser test measures whole loads, API answers included.
func TestPageWeight(t *testing.T) {
	t.Parallel()
	srv, acc := newServer(t, "http://127.0.0.1:8080")
	token := acc.session(t)
	_, css := do(t, client(nil), http.MethodGet, srv.URL+"/static/style.css", nil)
	_, js := do(t, client(nil), http.MethodGet, srv.URL+"/static/app.js", nil)
	for _, path := range []string{"/signin", "/invite/" + linkToken, "/", "/agents", "/agents/new", "/tools/x_y", "/activity", "/settings"} {
		_, body := do(t, client(nil), http.MethodGet, srv.URL+path, nil, sessionCookie(token))
		total := len(body) + gzipped(t, css) + gzipped(t, js)
		if total >= 100_000 {
			t.Errorf("%s weighs %d bytes with its assets, want under 100 KB", path, total)
		}
		for _, attr := range []string{`src="http`, `href="http`, `src="//`, `href="//`, "@import", "url(http"} {
			if strings.Contains(body, attr) || strings.Contains(css, attr) {
				t.Errorf("%s loads from another site (%s)", path, attr)
			}
		}
	}
	if strings.Contains(js, "fetch('http") || strings.Contains(js, "fetch(\"http") {
		t.Error("app.js fetches from another site")
	}
}

// gzipped is the size of s gzip-compressed, as the static handler serves it.
func gzipped(t *testing.T, s string) int {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}
