package api_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/connections"
)

// FuzzOAuthCallback: whatever state, code, error and browser cookie reach the OAuth
// callback, the answer is a refusal (400, 403 or 404), never a 5xx, and stores nothing.
func FuzzOAuthCallback(f *testing.F) {
	for _, s := range [][4]string{
		{"forged-state-0123456789", "code", "", "cookie"},
		{"", "", "access_denied", ""},
		{"x", "y", "server_error", "\x00"},
		{string(make([]byte, 600)), "c", "", "c"},
	} {
		f.Add(s[0], s[1], s[2], s[3], true)
		f.Add(s[0], s[1], s[2], s[3], false)
	}
	e := bareEngine(f, "https://hub.example.com", api.Options{})
	f.Fuzz(func(t *testing.T, state, code, oauthErr, cookie string, wantJSON bool) {
		q := url.Values{"state": {state}, "code": {code}}
		if oauthErr != "" {
			q.Set("error", oauthErr)
		}
		req, err := http.NewRequest(http.MethodGet, "/oauth/callback?"+q.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "hub.example.com"
		if c := (&http.Cookie{Name: connections.OAuthCookieName(state), Value: cookie}); c.Valid() == nil {
			req.AddCookie(c)
		}
		if wantJSON {
			req.Header.Set("Accept", "application/json")
		}
		rec := serveRequest(e, publicListener, req)
		switch rec.Code {
		case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound:
		default:
			t.Fatalf("callback state %q code %q error %q cookie %q: status %d: %s", state, code, oauthErr, cookie, rec.Code, rec.Body)
		}
	})
}
