package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/providers/slack"
)

// TestOAuthSlackDance connects Slack through oauth/v2/authorize and oauth.v2.access:
// comma-separated scopes, the team recorded, the bot token (or, with user scopes
// only, the user token) as the connection's token, and auth.revoke on disconnect.
func TestOAuthSlackDance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		userOnly  bool
		tokenType string
	}{
		{name: "bot token", tokenType: "bot"},
		{name: "user scopes only", userOnly: true, tokenType: "user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				t.Parallel()
				h := newOAuthHub(t, db, oauthtest.Options{Style: oauthtest.Slack, UserOnly: tt.userOnly})
				b := h.browser()
				authURL := h.authorize(b, h.member, "")
				q := authURL.Query()
				got := map[string]string{"path": authURL.Path, "scope": q.Get("scope"), "code_challenge": q.Get("code_challenge"), "client_id": q.Get("client_id")}
				want := map[string]string{"path": "/oauth/v2/authorize", "scope": strings.Join(slack.Spec().OAuth.Scopes, ","), "code_challenge": "", "client_id": testClientID}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("authorization URL (-want +got):\n%s", diff)
				}
				resp, page, _ := h.consent(b, authURL, "allow", "ada")
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Acme is connected") {
					t.Fatalf("callback: %d %s", resp.StatusCode, page)
				}
				conns := h.connections(h.member)
				if len(conns) != 1 {
					t.Fatalf("connections = %v", conns)
				}
				id := conns[0]["id"].(string)
				c, err := h.svc.Get(context.Background(), h.principal(h.member), id)
				if err != nil {
					t.Fatal(err)
				}
				gotConn := map[string]any{"account_id": c.AccountID, "label": c.AccountLabel, "meta": c.Meta, "kind": string(c.AuthKind)}
				wantConn := map[string]any{"account_id": "T0TEAM/U0USER", "label": "Acme", "kind": "oauth2",
					"meta": map[string]string{"team_id": "T0TEAM", "team_name": "Acme", "token_type": tt.tokenType}}
				if diff := cmp.Diff(wantConn, gotConn); diff != "" {
					t.Errorf("connection (-want +got):\n%s", diff)
				}
				_, creds, err := h.svc.Open(context.Background(), h.member.tenant, id)
				if err != nil {
					t.Fatal(err)
				}
				if !h.as.TokenValid(creds.AccessToken) || creds.TokenType != "Bearer" {
					t.Errorf("the stored token is not the one Slack issued (type %q)", creds.TokenType)
				}
				var authTest bool
				for _, r := range h.as.Requests() {
					if r.Path == "/api/auth.test" && r.Auth == "Bearer "+creds.AccessToken {
						authTest = true
					}
				}
				if !authTest {
					t.Error("the account's identity was not fetched with the new token (auth.test)")
				}
				h.api(h.member, http.MethodDelete, "/api/connections/"+id, "", http.StatusNoContent, nil)
				if h.as.Revocations() != 1 || h.as.TokenValid(creds.AccessToken) {
					t.Errorf("auth.revoke: revocations %d, token still valid %v", h.as.Revocations(), h.as.TokenValid(creds.AccessToken))
				}
			})
		})
	}
}

// TestOAuthSlackExchangeRefused: Slack answers a bad code with 200 and ok:false; the
// callback says so and stores nothing.
func TestOAuthSlackExchangeRefused(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newOAuthHub(t, db, oauthtest.Options{Style: oauthtest.Slack})
		h.as.FailNext("/api/oauth.v2.access", oauthtest.Failure{Status: http.StatusOK, Body: `{"ok":false,"error":"invalid_code"}`})
		b := h.browser()
		resp, page, _ := h.consent(b, h.authorize(b, h.admin, ""), "allow", "ada")
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(page), "invalid_code") {
			t.Errorf("status %d: %s", resp.StatusCode, page)
		}
		if n := h.countConnections(); n != 0 {
			t.Errorf("%d connections", n)
		}
	})
}

// TestOAuthRefreshAcrossProcesses: two Switchboard nodes with their own pools, caches
// and single-flight share one database; 100 calls on each at once on an expired token
// cause exactly one refresh between them.
func TestOAuthRefreshAcrossProcesses(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newOAuthHub(t, db, githubApp())
		id := connectGitHub(t, h, h.admin)
		other := h.newNode(testdb.Reopen(t, db))
		p := h.principal(h.admin)
		// Both nodes have the connection's client cached with the old token.
		for _, n := range []node{h.node, other} {
			if err := getIssue(h, n, p, id); err != nil {
				t.Fatal(err)
			}
		}
		h.clock.advance(16 * time.Minute)
		var wg sync.WaitGroup
		errs := make([]error, 200)
		for i := range errs {
			n := h.node
			if i%2 == 1 {
				n = other
			}
			wg.Go(func() { errs[i] = getIssue(h, n, p, id) })
		}
		testwait.Wait(t, "the concurrent calls to return", wg.Wait)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		if got := h.as.Refreshes(); got != 1 {
			t.Errorf("refreshes = %d across two nodes, want 1", got)
		}
	})
}

// TestOAuthRefreshFailures: a refused refresh token marks the connection
// needs_reconnect (shown in the API, audited, calls refused without asking the
// provider again) until the person reconnects it; a provider that is down leaves the
// connection usable while its token lasts, with the failure shown and audited.
func TestOAuthRefreshFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		failure    oauthtest.Failure
		attempts   int           // how many token requests fail
		advance    time.Duration // how far the hub's clock moves past the connect
		wantCode   switchboard.Code
		wantStatus string
		wantError  string
	}{
		{name: "refresh token refused", failure: oauthtest.Failure{Status: http.StatusBadRequest, Body: `{"error":"invalid_grant","error_description":"The refresh token is invalid"}`},
			attempts: 1, advance: 16 * time.Minute, wantCode: switchboard.CodeReconnect, wantStatus: "needs_reconnect", wantError: "invalid_grant"},
		{name: "token endpoint down, token still good", failure: oauthtest.Failure{Status: http.StatusServiceUnavailable, Body: `{"message":"unavailable"}`},
			attempts: 1, advance: 11 * time.Minute, wantStatus: "active", wantError: "refused to refresh the token"},
		{name: "token endpoint rate limited, token expired", failure: oauthtest.Failure{Status: http.StatusTooManyRequests, Body: `{"error":"slow_down"}`, Header: map[string]string{"Retry-After": "30"}},
			attempts: 3, advance: 16 * time.Minute, wantCode: switchboard.CodeRateLimited, wantStatus: "active", wantError: "slow_down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				t.Parallel()
				h := newOAuthHub(t, db, githubApp())
				id := connectGitHub(t, h, h.admin)
				p := h.principal(h.admin)
				// With an expired token the client kit retries a failed call twice.
				for range tt.attempts {
					h.as.FailNext("/login/oauth/access_token", tt.failure)
				}
				h.clock.advance(tt.advance)
				err := getIssue(h, h.node, p, id)
				if switchboard.CodeOf(err) != tt.wantCode && !(tt.wantCode == "" && err == nil) {
					t.Fatalf("call: %v (code %q), want code %q", err, switchboard.CodeOf(err), tt.wantCode)
				}
				view := map[string]any{}
				h.api(h.admin, http.MethodGet, "/api/connections/"+id, "", http.StatusOK, &view)
				if view["status"] != tt.wantStatus || !strings.Contains(view["last_refresh_error"].(string), tt.wantError) {
					t.Errorf("connection status %v, last_refresh_error %q; want %s and %q", view["status"], view["last_refresh_error"], tt.wantStatus, tt.wantError)
				}
				if !contains(h.auditKinds(h.admin.tenant), "connection_refresh_failed") {
					t.Error("no connection_refresh_failed audit event")
				}
				if tt.wantStatus != "needs_reconnect" {
					// The next call refreshes, and the failure is cleared.
					if err := getIssue(h, h.node, p, id); err != nil {
						t.Fatalf("call after the failure: %v", err)
					}
					view = map[string]any{}
					h.api(h.admin, http.MethodGet, "/api/connections/"+id, "", http.StatusOK, &view)
					if h.as.Refreshes() != 1 || view["last_refresh_error"] != nil {
						t.Errorf("after recovery: refreshes %d, last_refresh_error %v", h.as.Refreshes(), view["last_refresh_error"])
					}
					return
				}
				if !contains(h.auditKinds(h.admin.tenant), "connection_needs_reconnect") {
					t.Error("no connection_needs_reconnect audit event")
				}
				calls := len(h.as.Requests())
				if err := getIssue(h, h.node, p, id); switchboard.CodeOf(err) != switchboard.CodeReconnect {
					t.Errorf("a call on a needs_reconnect connection: %v", err)
				}
				if n := len(h.as.Requests()); n != calls {
					t.Errorf("%d requests reached the provider for a connection that needs reconnecting", n-calls)
				}
				// Connecting the same account again reconnects this connection.
				h.clock.advance(-tt.advance)
				if again := connectGitHub(t, h, h.admin); again != id {
					t.Errorf("reconnect made connection %s, want %s again", again, id)
				}
				view = map[string]any{}
				h.api(h.admin, http.MethodGet, "/api/connections/"+id, "", http.StatusOK, &view)
				if view["status"] != "active" || view["last_refresh_error"] != nil || h.countConnections() != 1 {
					t.Errorf("after reconnect: %v, %d connections", view, h.countConnections())
				}
			})
		})
	}
}

// TestOAuthRevokeFailureIsReported: when the provider does not revoke, the disconnect
// still deletes the credentials, and says the grant is alive.
func TestOAuthRevokeFailureIsReported(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newOAuthHub(t, db, githubApp())
		id := connectGitHub(t, h, h.admin)
		h.as.FailNext("/api/v3/applications/"+testClientID+"/grant", oauthtest.Failure{Status: http.StatusInternalServerError, Body: `{"message":"Server Error"}`})
		var out map[string]any
		h.api(h.admin, http.MethodDelete, "/api/connections/"+id, "", http.StatusOK, &out)
		if out["deleted"] != true || out["revoked"] != false || !strings.Contains(out["revoke_error"].(string), "Server Error") {
			t.Errorf("disconnect answer = %v", out)
		}
		if h.countConnections() != 0 {
			t.Error("the connection was kept")
		}
		if !contains(h.auditKinds(h.admin.tenant), "connection_revoke_failed") {
			t.Error("no connection_revoke_failed audit event")
		}
	})
}

// TestOAuthBackgroundRefresher: a pass refreshes tokens expiring within 10 minutes
// once, and exercises a refresh token that was not used for a day.
func TestOAuthBackgroundRefresher(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    oauthtest.Options
		advance time.Duration
	}{
		{name: "expiring within 10 minutes", opts: githubApp(), advance: 6 * time.Minute},
		{name: "idle refresh token", opts: oauthtest.Options{Style: oauthtest.GitHub}, advance: 25 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				t.Parallel()
				h := newOAuthHub(t, db, tt.opts)
				id := connectGitHub(t, h, h.admin)
				if _, err := h.svc.RefreshDue(context.Background()); err != nil || h.as.Refreshes() != 0 {
					t.Fatalf("a pass before anything is due: refreshes %d, err %v", h.as.Refreshes(), err)
				}
				h.clock.advance(tt.advance)
				n, err := h.svc.RefreshDue(context.Background())
				if err != nil || n != 1 || h.as.Refreshes() != 1 {
					t.Fatalf("pass: n %d, refreshes %d, err %v", n, h.as.Refreshes(), err)
				}
				if n, err := h.svc.RefreshDue(context.Background()); err != nil || n != 0 || h.as.Refreshes() != 1 {
					t.Errorf("second pass: n %d, refreshes %d, err %v", n, h.as.Refreshes(), err)
				}
				if err := getIssue(h, h.node, h.principal(h.admin), id); err != nil {
					t.Errorf("call after the background refresh: %v", err)
				}
			})
		})
	}
}

// TestOAuthTenantApps: a tenant admin sets the tenant's own OAuth app, which then takes
// precedence over the deployment's for that tenant only; its secret never comes back.
func TestOAuthTenantApps(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		h := newOAuthHub(t, db, githubApp())
		const secret = "tenant-app-secret-0123456789"
		h.addSecret(secret)
		tests := []struct {
			name   string
			who    actor
			method string
			path   string
			body   string
			status int
			field  string
		}{
			{name: "member may not", who: h.member, method: http.MethodPut, path: "/api/oauth-apps/github", body: `{"client_id":"x","client_secret":"y"}`, status: http.StatusForbidden},
			{name: "secret required", who: h.admin, method: http.MethodPut, path: "/api/oauth-apps/github", body: `{"client_id":"x"}`, status: http.StatusBadRequest, field: "client_secret"},
			{name: "unknown provider", who: h.admin, method: http.MethodPut, path: "/api/oauth-apps/nope", body: `{"client_id":"x","client_secret":"y"}`, status: http.StatusBadRequest, field: "provider"},
			{name: "set", who: h.admin, method: http.MethodPut, path: "/api/oauth-apps/github", body: `{"client_id":"tenant-app","client_secret":"` + secret + `"}`, status: http.StatusOK},
		}
		for _, tt := range tests {
			b := h.api(tt.who, tt.method, tt.path, tt.body, tt.status, nil)
			if tt.field != "" {
				if e := decodeError(t, b); e.Error.Field != tt.field {
					t.Errorf("%s: field %q, want %q", tt.name, e.Error.Field, tt.field)
				}
			}
		}
		var list struct {
			Apps []map[string]any `json:"oauth_apps"`
		}
		h.api(h.admin, http.MethodGet, "/api/oauth-apps", "", http.StatusOK, &list)
		if len(list.Apps) != 1 || list.Apps[0]["client_id"] != "tenant-app" || list.Apps[0]["provider"] != "github" {
			t.Errorf("oauth apps = %v", list.Apps)
		}
		if got := h.authorize(h.browser(), h.admin, "").Query().Get("client_id"); got != "tenant-app" {
			t.Errorf("the tenant's flow uses client %q, want its own app", got)
		}
		if got := h.authorize(h.browser(), h.ownerB, "").Query().Get("client_id"); got != testClientID {
			t.Errorf("another tenant's flow uses client %q, want the deployment's", got)
		}
		h.api(h.ownerB, http.MethodDelete, "/api/oauth-apps/github", "", http.StatusNotFound, nil)
		h.api(h.admin, http.MethodDelete, "/api/oauth-apps/github", "", http.StatusNoContent, nil)
		if got := h.authorize(h.browser(), h.admin, "").Query().Get("client_id"); got != testClientID {
			t.Errorf("after deleting its app the tenant uses client %q, want the deployment's", got)
		}
	})
}
