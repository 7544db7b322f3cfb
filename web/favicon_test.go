package web_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestFavicon checks that every page links an icon the server has: an SVG under
// /static, by content hash, served as image/svg+xml (no browser asks /favicon.ico and
// gets a 404, and tabs of the UI are told apart from others).
func TestFavicon(t *testing.T) {
	t.Parallel()
	srv, acc := newServer(t, "https://hub.example.com")
	token := acc.session(t)
	for _, tc := range []struct {
		path    string
		cookies []*http.Cookie
	}{{"/signin", nil}, {"/", []*http.Cookie{sessionCookie(token)}}, {"/no/such/page", nil}} {
		_, page := do(t, client(nil), http.MethodGet, srv.URL+tc.path, nil, tc.cookies...)
		m := regexp.MustCompile(`<link rel="icon" href="(/static/favicon\.svg\?v=[0-9a-f]+)" type="image/svg\+xml">`).FindStringSubmatch(page)
		if m == nil {
			t.Errorf("%s links no SVG icon under /static:\n%s", tc.path, page)
			continue
		}
		res, body := do(t, client(nil), http.MethodGet, srv.URL+m[1], nil)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(body, "<svg") {
			t.Errorf("%s's icon %s answered %d %q %.40q", tc.path, m[1], res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}
}
