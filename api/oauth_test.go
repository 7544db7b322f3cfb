package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/api"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/router"
)

// githubApp is a GitHub App whose user tokens expire: 15 minutes for the first (so
// that a clock moved 6 minutes makes it due for the background refresher, 11 minutes
// due for a call's refresh while still valid, and 16 minutes expired), 8 hours once
// refreshed, each refresh rotating the refresh token.
func githubApp() oauthtest.Options {
	return oauthtest.Options{Style: oauthtest.GitHub, CodeTokenTTL: 15 * time.Minute, RefreshedTokenTTL: 8 * time.Hour}
}

// connectGitHub runs the whole dance for who and returns the new connection's ID.
func connectGitHub(t *testing.T, h *oauthHub, who actor) string {
	t.Helper()
	b := h.browser()
	authURL := h.authorize(b, who, "")
	resp, page, _ := h.consent(b, authURL, "allow", "octocat")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Connected") {
		t.Fatalf("callback: status %d: %s", resp.StatusCode, page)
	}
	for _, c := range h.connections(who) {
		if c["provider"] == "github" && c["auth_kind"] == "oauth2" {
			return c["id"].(string)
		}
	}
	t.Fatal("no OAuth connection after the callback")
	return ""
}

func getIssue(h *oauthHub, n node, p switchboard.Principal, connID string) error {
	_, err := n.rtr.Execute(context.Background(), p, router.Request{Tool: "github_get_issue", ConnectionID: connID, Args: json.RawMessage(`{"owner":"o","repo":"r","issue_number":1}`)})
	return err
}

// TestOAuthGitHubDance drives the whole flow over HTTP against a real authorization
// server: authorize, consent, callback, exchange with PKCE, identity, a call that
// triggers a refresh (200 at once, on an expired token: one refresh), rotation of the
// refresh token, a replayed callback, and disconnect with revocation.
func TestOAuthGitHubDance(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newOAuthHub(t, db, githubApp())
		b := h.browser()
		authURL := h.authorize(b, h.admin, `{"shared":true}`)

		// The authorization URL names our app, the exact redirect URI, PKCE S256 and
		// the scopes; the state is 256 random bits.
		q := authURL.Query()
		state := q.Get("state")
		got := map[string]string{"path": authURL.Path, "client_id": q.Get("client_id"), "redirect_uri": q.Get("redirect_uri"), "response_type": q.Get("response_type"),
			"code_challenge_method": q.Get("code_challenge_method"), "scope": q.Get("scope"), "state_len": fmt.Sprint(len(state)), "challenge_len": fmt.Sprint(len(q.Get("code_challenge")))}
		want := map[string]string{"path": "/login/oauth/authorize", "client_id": testClientID, "redirect_uri": h.srv.URL + api.CallbackPath, "response_type": "code",
			"code_challenge_method": "S256", "scope": "repo read:user read:org gist notifications workflow", "state_len": "52", "challenge_len": "43"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("authorization URL (-want +got):\n%s", diff)
		}
		// The state is stored hashed only, bound to the user.
		var rows []map[string]any
		if err := db.Table("oauth_states").Find(&rows).Error; err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(state))
		if len(rows) != 1 || rows[0]["id"] != hex.EncodeToString(sum[:]) || rows[0]["user_id"] != h.admin.userID {
			t.Fatalf("oauth_states = %v, want one row keyed by the state's SHA-256 for the admin", rows)
		}
		for k, v := range rows[0] {
			if s, ok := v.(string); ok && strings.Contains(s, state) {
				t.Errorf("oauth_states.%s holds the state itself", k)
			}
		}
		// The browser cookie is HTTP-only, SameSite=Lax, scoped to the callback.
		hub, _ := url.Parse(h.srv.URL + api.CallbackPath)
		if cs := b.Jar.Cookies(hub); len(cs) != 1 || cs[0].Name != connections.OAuthCookieName(state) {
			t.Fatalf("browser cookies for the callback = %v", cs)
		}

		resp, page, callback := h.consent(b, authURL, "allow", "octocat")
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "octocat is connected") {
			t.Fatalf("callback: status %d: %s", resp.StatusCode, page)
		}
		if h.as.Exchanges() != 1 {
			t.Errorf("exchanges = %d, want 1", h.as.Exchanges())
		}
		var exchange oauthtest.Request
		for _, r := range h.as.Requests() {
			if r.Path == "/login/oauth/access_token" {
				exchange = r
			}
		}
		gotEx := map[string]string{"grant_type": exchange.Form.Get("grant_type"), "redirect_uri": exchange.Form.Get("redirect_uri"), "client_id": exchange.Form.Get("client_id"),
			"client_secret": exchange.Form.Get("client_secret"), "has_verifier": fmt.Sprint(exchange.Form.Get("code_verifier") != ""), "method": exchange.Method}
		wantEx := map[string]string{"grant_type": "authorization_code", "redirect_uri": h.srv.URL + api.CallbackPath, "client_id": testClientID,
			"client_secret": testClientSecret, "has_verifier": "true", "method": http.MethodPost}
		if diff := cmp.Diff(wantEx, gotEx); diff != "" {
			t.Errorf("token exchange request (-want +got):\n%s", diff)
		}

		conns := h.connections(h.admin)
		if len(conns) != 1 {
			t.Fatalf("connections = %v", conns)
		}
		c := conns[0]
		gotConn := map[string]any{"provider": c["provider"], "auth_kind": c["auth_kind"], "account_id": c["account_id"], "account_label": c["account_label"], "status": c["status"], "shared": c["shared"], "scopes": c["scopes"]}
		wantConn := map[string]any{"provider": "github", "auth_kind": "oauth2", "account_id": "4242", "account_label": "octocat", "status": "active", "shared": true, "scopes": []any{"repo", "read:user", "read:org", "gist", "notifications", "workflow"}}
		if diff := cmp.Diff(wantConn, gotConn); diff != "" {
			t.Errorf("connection (-want +got):\n%s", diff)
		}
		if c["expires_at"] == nil {
			t.Error("the connection does not show when its token expires")
		}
		connID := c["id"].(string)

		// The callback URL again (a replay, even from the same browser) creates nothing.
		resp, page = h.send(b, actor{}, http.MethodGet, callback.String(), "", nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(page), "was used already") {
			t.Errorf("replayed callback: status %d: %s", resp.StatusCode, page)
		}
		if n := h.countConnections(); n != 1 {
			t.Errorf("%d connections after the replay, want 1", n)
		}

		// A call works on the fresh token without refreshing it.
		p := h.principal(h.admin)
		if err := getIssue(h, h.node, p, connID); err != nil {
			t.Fatalf("call on the fresh token: %v", err)
		}
		if h.as.Refreshes() != 0 {
			t.Fatalf("refreshes = %d before the token expired", h.as.Refreshes())
		}
		_, before, err := h.svc.Open(context.Background(), h.admin.tenant, connID)
		if err != nil {
			t.Fatal(err)
		}

		// The token has expired (for the hub): 200 calls at once refresh it once.
		h.clock.advance(16 * time.Minute)
		var wg sync.WaitGroup
		errs := make([]error, 200)
		for i := range errs {
			wg.Go(func() { errs[i] = getIssue(h, h.node, p, connID) })
		}
		testwait.Wait(t, "the concurrent calls to return", wg.Wait)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		if h.as.Refreshes() != 1 {
			t.Errorf("refreshes = %d after 200 concurrent calls on an expired token, want 1", h.as.Refreshes())
		}
		after, afterCreds, err := h.svc.Open(context.Background(), h.admin.tenant, connID)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case afterCreds.RefreshToken == before.RefreshToken || afterCreds.RefreshToken == "":
			t.Error("the rotated refresh token was not stored")
		case afterCreds.AccessToken == before.AccessToken:
			t.Error("the new access token was not stored")
		case h.as.TokenValid(before.AccessToken):
			t.Error("the old access token is still valid upstream: the refresh did not rotate it")
		case after.RefreshedAt == nil || after.Version <= 1:
			t.Errorf("refreshed_at %v, version %d after the refresh", after.RefreshedAt, after.Version)
		}
		var refresh oauthtest.Request
		for _, r := range h.as.Requests() {
			if r.Form.Get("grant_type") == "refresh_token" {
				refresh = r
			}
		}
		if refresh.Form.Get("refresh_token") != before.RefreshToken || refresh.Form.Get("client_id") != testClientID {
			t.Errorf("refresh request form has client_id %q and the old refresh token: %v", refresh.Form.Get("client_id"), refresh.Form.Get("refresh_token") == before.RefreshToken)
		}
		var view map[string]any
		h.api(h.admin, http.MethodGet, "/api/connections/"+connID, "", http.StatusOK, &view)
		if view["refreshed_at"] == nil || view["status"] != "active" {
			t.Errorf("the API does not show the refresh: %v", view)
		}

		// Disconnect revokes the grant upstream, then deletes the credentials.
		h.api(h.admin, http.MethodDelete, "/api/connections/"+connID, "", http.StatusNoContent, nil)
		if h.as.Revocations() != 1 || h.as.TokenValid(afterCreds.AccessToken) {
			t.Errorf("revocations = %d, token still valid = %v", h.as.Revocations(), h.as.TokenValid(afterCreds.AccessToken))
		}
		var del oauthtest.Request
		for _, r := range h.as.Requests() {
			if r.Method == http.MethodDelete {
				del = r
			}
		}
		if del.Path != "/api/v3/applications/"+testClientID+"/grant" || !strings.HasPrefix(del.Auth, "Basic ") {
			t.Errorf("revocation request %s %s with %q auth", del.Method, del.Path, strings.Fields(del.Auth + " ")[0])
		}
		if n := h.countConnections(); n != 0 {
			t.Errorf("%d connections after disconnect", n)
		}
		kinds := h.auditKinds(h.admin.tenant)
		for _, k := range []string{"connection_created", "connection_deleted"} {
			if !contains(kinds, k) {
				t.Errorf("audit kinds %v lack %s", kinds, k)
			}
		}
	})
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestOAuthCallbackRefusals: every way a callback can go wrong ends on a clear page
// or JSON error and stores nothing.
func TestOAuthCallbackRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// run completes (or tries to) a flow the admin started in browser b at authURL;
		// it returns the callback's response and body.
		run        func(t *testing.T, h *oauthHub, b *http.Client, authURL *url.URL) (*http.Response, []byte)
		wantStatus int
		wantText   string
	}{
		{
			name: "access denied",
			run: func(t *testing.T, h *oauthHub, b *http.Client, authURL *url.URL) (*http.Response, []byte) {
				resp, body, _ := h.consent(b, authURL, "deny", "octocat")
				return resp, body
			},
			wantStatus: http.StatusForbidden, wantText: "was not granted",
		},
		{
			name: "another browser completes it",
			run: func(t *testing.T, h *oauthHub, b *http.Client, authURL *url.URL) (*http.Response, []byte) {
				// The victim's browser, lured to the admin's authorization URL, lacks the cookie.
				resp, body, _ := h.consent(h.browser(), authURL, "allow", "victim")
				return resp, body
			},
			wantStatus: http.StatusForbidden, wantText: "started in another browser",
		},
		{
			name: "another user's key on the callback",
			run: func(t *testing.T, h *oauthHub, b *http.Client, authURL *url.URL) (*http.Response, []byte) {
				_, _, callback := h.consentNoFollow(b, authURL)
				return h.send(b, h.ownerB, http.MethodGet, callback.String(), "", nil)
			},
			wantStatus: http.StatusForbidden, wantText: "started by another user",
		},
		{
			name: "expired state",
			run: func(t *testing.T, h *oauthHub, b *http.Client, authURL *url.URL) (*http.Response, []byte) {
				_, _, callback := h.consentNoFollow(b, authURL)
				h.clock.advance(11 * time.Minute)
				return h.send(b, actor{}, http.MethodGet, callback.String(), "", nil)
			},
			wantStatus: http.StatusBadRequest, wantText: "has expired",
		},
		{
			name: "unknown state",
			run: func(t *testing.T, h *oauthHub, b *http.Client, authURL *url.URL) (*http.Response, []byte) {
				_, _, callback := h.consentNoFollow(b, authURL)
				q := callback.Query()
				q.Set("state", switchboard.RandomToken(32))
				callback.RawQuery = q.Encode()
				return h.send(b, actor{}, http.MethodGet, callback.String(), "", nil)
			},
			wantStatus: http.StatusBadRequest, wantText: "state is unknown",
		},
		{
			name: "exchange refused",
			run: func(t *testing.T, h *oauthHub, b *http.Client, authURL *url.URL) (*http.Response, []byte) {
				_, _, callback := h.consentNoFollow(b, authURL)
				q := callback.Query()
				q.Set("code", "forged-code-0123456789")
				callback.RawQuery = q.Encode()
				return h.send(b, actor{}, http.MethodGet, callback.String(), "", map[string]string{"Accept": "application/json"})
			},
			wantStatus: http.StatusBadRequest, wantText: `"field":"code"`,
		},
		{
			name: "token endpoint down",
			run: func(t *testing.T, h *oauthHub, b *http.Client, authURL *url.URL) (*http.Response, []byte) {
				h.as.FailNext("/login/oauth/access_token", oauthtest.Failure{Status: http.StatusServiceUnavailable, Body: `{"message":"unavailable"}`})
				resp, body, _ := h.consent(b, authURL, "allow", "octocat")
				return resp, body
			},
			wantStatus: http.StatusBadGateway, wantText: "refused to exchange the authorization code",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				t.Parallel()
				h := newOAuthHub(t, db, githubApp())
				before := h.countConnections()
				b := h.browser()
				authURL := h.authorize(b, h.admin, "")
				resp, body := tt.run(t, h, b, authURL)
				if resp.StatusCode != tt.wantStatus || !strings.Contains(string(body), tt.wantText) {
					t.Errorf("status %d, want %d with %q: %s", resp.StatusCode, tt.wantStatus, tt.wantText, body)
				}
				if n := h.countConnections(); n != before {
					t.Errorf("%d connections after a refused callback, want %d", n, before)
				}
				if !contains(h.auditKinds(h.admin.tenant), "oauth_connect_failed") && tt.name != "unknown state" {
					t.Error("no oauth_connect_failed audit event")
				}
			})
		})
	}
}

// consentNoFollow allows the consent but stops at the redirect, returning the
// callback URL the browser would open.
func (h *oauthHub) consentNoFollow(b *http.Client, authURL *url.URL) (*http.Response, []byte, *url.URL) {
	h.t.Helper()
	nb := *b
	nb.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), h.srv.URL) {
			return http.ErrUseLastResponse
		}
		return nil
	}
	resp, body, _ := h.consent(&nb, authURL, "allow", "octocat")
	loc, err := resp.Location()
	if err != nil {
		h.t.Fatalf("consent did not redirect: %d %s", resp.StatusCode, body)
	}
	h.addSecret(loc.Query().Get("code"))
	return resp, body, loc
}

// TestOAuthCallbackURLHolderCannotBurnState: a callback URL opened in a browser that
// did not start the flow is refused before the state is used, so the browser that
// started it still finishes it.
func TestOAuthCallbackURLHolderCannotBurnState(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newOAuthHub(t, db, githubApp())
		b := h.browser()
		authURL := h.authorize(b, h.admin, "")
		_, _, callback := h.consentNoFollow(b, authURL)
		resp, body := h.send(h.browser(), actor{}, http.MethodGet, callback.String(), "", nil)
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("callback in another browser: status %d, want 403: %s", resp.StatusCode, body)
		}
		resp, body = h.send(b, actor{}, http.MethodGet, callback.String(), "", nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "is connected") {
			t.Fatalf("callback in the flow's browser after a stranger tried it: status %d: %s", resp.StatusCode, body)
		}
		if n := h.countConnections(); n != 1 {
			t.Errorf("%d connections, want 1", n)
		}
	})
}
