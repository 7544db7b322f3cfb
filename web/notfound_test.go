package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestNotFoundPage checks that an address the UI does not have answers 404 with a page
// in the layout that says so and leads back: the navigation for a signed-in person,
// sign-in for anyone else.
func TestNotFoundPage(t *testing.T) {
	t.Parallel()
	srv, acc := newServer(t, "https://hub.example.com")
	token := acc.session(t)
	tests := []struct {
		name         string
		cookies      []*http.Cookie
		want, refuse []string
	}{
		{name: "signed in", cookies: []*http.Cookie{sessionCookie(token)},
			want:   []string{"<h1>Page not found</h1>", "<code>/integrations/nope</code>", `<nav aria-label="Main">`, `<a href="/agents">Agents</a>`, `<main id="main"`},
			refuse: []string{`href="/signin"`}},
		{name: "signed out",
			want:   []string{"<h1>Page not found</h1>", `<a href="/signin">Sign in</a>`, `<main id="main"`},
			refuse: []string{`<nav aria-label="Main">`, "csrf-token"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, body := do(t, client(nil), http.MethodGet, srv.URL+"/integrations/nope", nil, tc.cookies...)
			if res.StatusCode != http.StatusNotFound || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("status %d, type %q; want 404 and a page", res.StatusCode, res.Header.Get("Content-Type"))
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %s", w)
				}
			}
			for _, r := range tc.refuse {
				if strings.Contains(body, r) {
					t.Errorf("the page holds %s", r)
				}
			}
		})
	}
}
