package api_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/tenants"
)

// browser is a signed-in UI session: the cookie and the CSRF token its pages carry.
type browser struct {
	cookie string
	csrf   string
}

// signIn sets the user's password and signs in, as the web pages do.
func (w *world) signIn(slug string, who actor, email string) browser {
	w.t.Helper()
	ctx := context.Background()
	if err := w.tenants.SetPassword(ctx, who.tenant, who.userID, "a long enough password"); err != nil {
		w.t.Fatal(err)
	}
	token, _, err := w.tenants.SignIn(ctx, slug, email, "a long enough password")
	if err != nil {
		w.t.Fatal(err)
	}
	return browser{cookie: token, csrf: tenants.CSRFToken(token)}
}

// doBrowser sends a request with the session cookie and, when csrf is set, the header.
func (w *world) doBrowser(b browser, csrf, method, path, body string) (int, string) {
	w.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, w.srv.URL+path, r)
	if err != nil {
		w.t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: api.SessionCookie, Value: b.cookie})
	if csrf != "" {
		req.Header.Set(api.CSRFHeader, csrf)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := w.srv.Client().Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	w.bodies = append(w.bodies, out)
	w.mu.Unlock()
	checkExchange(w.t, method, req.URL.Path, []byte(body), res, out)
	return res.StatusCode, string(out)
}

func TestSessionCookieAndCSRF(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		member := w.signIn("default", w.member, "member@a.test")
		ownerB := w.signIn("tenant-b", w.ownerB, "owner@b.test")
		tests := []struct {
			name       string
			who        browser
			csrf       string
			method     string
			path       string
			body       string
			wantStatus int
			wantBody   string
		}{
			{name: "read with the cookie", who: member, method: http.MethodGet, path: "/api/tenant", wantStatus: http.StatusOK, wantBody: `"slug":"default"`},
			{name: "read needs no CSRF token", who: member, method: http.MethodGet, path: "/api/keys", wantStatus: http.StatusOK},
			{name: "the other tenant's session sees its own tenant", who: ownerB, method: http.MethodGet, path: "/api/tenant", wantStatus: http.StatusOK, wantBody: `"slug":"tenant-b"`},
			{name: "change without the CSRF token", who: member, method: http.MethodPost, path: "/api/keys", body: `{"name":"laptop"}`, wantStatus: http.StatusForbidden, wantBody: "X-CSRF-Token"},
			{name: "change with another session's CSRF token", who: member, csrf: ownerB.csrf, method: http.MethodPost, path: "/api/keys", body: `{"name":"laptop"}`, wantStatus: http.StatusForbidden, wantBody: "reload the page"},
			{name: "delete without the CSRF token", who: member, method: http.MethodDelete, path: "/api/keys/key_x", wantStatus: http.StatusForbidden},
			{name: "change with the CSRF token", who: member, csrf: member.csrf, method: http.MethodPost, path: "/api/keys", body: `{"name":"laptop"}`, wantStatus: http.StatusCreated, wantBody: `"name":"laptop"`},
			{name: "admin-only endpoint for a member session", who: member, csrf: member.csrf, method: http.MethodPost, path: "/api/invitations", body: `{"email":"x@a.test"}`, wantStatus: http.StatusForbidden},
			{name: "unknown session", who: browser{cookie: "sbs_nope"}, method: http.MethodGet, path: "/api/tenant", wantStatus: http.StatusUnauthorized, wantBody: "sign in again"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				status, body := w.doBrowser(tc.who, tc.csrf, tc.method, tc.path, tc.body)
				if status != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
					t.Fatalf("status %d body %s, want %d with %q", status, body, tc.wantStatus, tc.wantBody)
				}
			})
		}
		// A signed-out session is refused at once.
		if err := w.tenants.SignOut(context.Background(), member.cookie); err != nil {
			t.Fatal(err)
		}
		if status, body := w.doBrowser(member, "", http.MethodGet, "/api/tenant", ""); status != http.StatusUnauthorized {
			t.Fatalf("after sign-out: status %d body %s, want 401", status, body)
		}
	})
}
