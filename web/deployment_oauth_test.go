package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
)

// TestDeploymentOAuthAppsSection: Settings shows the deployment's OAuth apps, with
// their form, to the operator only; a workspace admin sees the workspace's own apps
// and not the operator's section. The script fills it from the operator's routes and
// never keeps the secret in the page.
func TestDeploymentOAuthAppsSection(t *testing.T) {
	t.Parallel()
	srv, acc := newServer(t, "https://hub.example.com/")
	admin := acc.session(t)
	operator := "sbs_operator"
	acc.mu.Lock()
	acc.sessions[operator] = switchboard.Principal{TenantID: "ten_acme", TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: "usr_alice", Role: switchboard.RoleOwner, Operator: true}
	acc.mu.Unlock()
	for _, tc := range []struct {
		name    string
		session string
		shown   bool
	}{{"operator", operator, true}, {"workspace admin", admin, false}} {
		_, body := do(t, client(nil), http.MethodGet, srv.URL+"/settings", nil, sessionCookie(tc.session))
		if !strings.Contains(body, `id="oauth-form"`) {
			t.Errorf("%s: Settings lacks the workspace's OAuth apps", tc.name)
		}
		for _, w := range []string{`id="deployment-oauth-title"`, `id="deployment-oauth-form"`, `id="deployment-oauth-client-secret" name="client_secret" type="password"`} {
			if strings.Contains(body, w) != tc.shown {
				t.Errorf("%s: Settings holds %s: %v, want %v", tc.name, w, !tc.shown, tc.shown)
			}
		}
	}
	_, js := do(t, client(nil), http.MethodGet, srv.URL+"/static/app.js", nil)
	for _, w := range []string{"'/api/deployment/oauth-apps'", "`/api/deployment/oauth-apps/${encodeURIComponent(", "$('#deployment-oauth-client-secret').value = '';"} {
		if !strings.Contains(js, w) {
			t.Errorf("app.js lacks %s", w)
		}
	}
}
