package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/web"
)

// ssoMethods is how each workspace signs in: slug → {single sign-on, passwords}.
type ssoMethods map[string][2]bool

func (m ssoMethods) SignInMethods(_ context.Context, slug string) (bool, bool, error) {
	v, ok := m[slug]
	if !ok {
		return false, true, nil
	}
	return v[0], v[1], nil
}

// ssoOnlyAccounts refuses passwords for the workspace "sso-only", as the tenants store
// does where passwords are off.
type ssoOnlyAccounts struct{ *fakeAccounts }

func (a ssoOnlyAccounts) SignIn(ctx context.Context, slug, email, pw string) (string, error) {
	if slug == "sso-only" {
		return "", &switchboard.Error{Code: switchboard.CodeForbidden, Message: "this workspace signs in with single sign-on only: use Continue with single sign-on"}
	}
	return a.fakeAccounts.SignIn(ctx, slug, email, pw)
}

// TestSignInPageSingleSignOn: the sign-in page of a workspace with single sign-on
// (/signin?workspace=SLUG) has its button, which starts the sign-in with where to go
// afterwards; where passwords are off it has no password form, and a password posted
// anyway is refused with the reason and the button; a workspace without single
// sign-on keeps the password form and offers to look a workspace up.
func TestSignInPageSingleSignOn(t *testing.T) {
	t.Parallel()
	h, err := web.Handler(web.Options{PublicURL: "https://hub.example.com", DefaultTenant: "acme", Accounts: ssoOnlyAccounts{newFakeAccounts()},
		SSO: ssoMethods{"both": {true, true}, "sso-only": {true, false}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := client(newJar(t))
	startLink := func(slug, next string) string {
		return `href="/signin/sso?` + strings.ReplaceAll(url.Values{"next": {next}, "workspace": {slug}}.Encode(), "&", "&amp;") + `"`
	}
	for _, tc := range []struct {
		query, link     string
		passwords, find bool
	}{
		{query: "?workspace=both&next=%2Fagents", link: startLink("both", "/agents"), passwords: true},
		{query: "?workspace=sso-only", link: startLink("sso-only", "/")},
		{query: "", passwords: true, find: true},                // acme, the default: no single sign-on
		{query: "?workspace=nope", passwords: true, find: true}, // unknown: like a workspace without it
	} {
		res, body := do(t, c, http.MethodGet, srv.URL+"/signin"+tc.query, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /signin%s: %d", tc.query, res.StatusCode)
		}
		if has := strings.Contains(body, `id="sso-start"`); has != (tc.link != "") || (tc.link != "" && !strings.Contains(body, tc.link)) {
			t.Errorf("GET /signin%s: single sign-on button %v, want link %s:\n%s", tc.query, has, tc.link, body)
		}
		if has := strings.Contains(body, `name="password"`); has != tc.passwords {
			t.Errorf("GET /signin%s: password form %v, want %v", tc.query, has, tc.passwords)
		}
		if has := strings.Contains(body, `id="sso-workspace"`); has != tc.find {
			t.Errorf("GET /signin%s: workspace finder %v, want %v", tc.query, has, tc.find)
		}
	}
	tok := formToken(t, c, srv.URL+"/signin")
	res, body := do(t, c, http.MethodPost, srv.URL+"/signin", url.Values{"csrf": {tok}, "tenant": {"sso-only"}, "email": {"alice@acme.test"}, "password": {goodPassword}})
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "signs in with single sign-on only") || !strings.Contains(body, `id="sso-start"`) || cookieNamed(res, "switchboard_session") != nil {
		t.Errorf("a password to a workspace without passwords: %d\n%s", res.StatusCode, body)
	}
}

// TestSettingsSingleSignOnSection: Settings has the single sign-on section, with its
// script, for the workspace's owners only (not its admins); every page has the region
// that shows owners the changes of single sign-on they have not acknowledged; and
// where the workspace has single sign-on and passwords, everyone gets the form that
// links their account to the identity provider, with the session's CSRF token.
func TestSettingsSingleSignOnSection(t *testing.T) {
	t.Parallel()
	acc := newFakeAccounts()
	h, err := web.Handler(web.Options{PublicURL: "https://hub.example.com", DefaultTenant: "acme", Accounts: acc, SSO: ssoMethods{"acme": {true, true}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	admin := acc.session(t)
	acc.mu.Lock()
	acc.sessions["sbs_owner"] = switchboard.Principal{TenantID: "ten_acme", TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: "usr_o", Role: switchboard.RoleOwner}
	acc.sessions["sbs_member"] = switchboard.Principal{TenantID: "ten_acme", TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: "usr_m", Role: switchboard.RoleMember}
	acc.mu.Unlock()
	c := client(nil)
	for _, tc := range []struct {
		name, session string
		owner         bool
	}{{"owner", "sbs_owner", true}, {"admin", admin, false}, {"member", "sbs_member", false}} {
		res, body := do(t, c, http.MethodGet, srv.URL+"/settings", nil, &http.Cookie{Name: "switchboard_session", Value: tc.session})
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /settings: %d", res.StatusCode)
		}
		has := strings.Contains(body, `id="sso-form"`) || strings.Contains(body, `id="sso-links"`) || strings.Contains(body, `<script src="/static/sso.js?v=`)
		if has != tc.owner {
			t.Errorf("%s: single sign-on section %v, want %v", tc.name, has, tc.owner)
		}
		link := `action="/signin/sso/link"`
		if !strings.Contains(body, link) || !strings.Contains(body, `name="csrf" value="`+acc.CSRFToken(tc.session)+`"`) {
			t.Errorf("%s: Settings has no form linking single sign-on with the session's CSRF token", tc.name)
		}
		_, body = do(t, c, http.MethodGet, srv.URL+"/agents", nil, &http.Cookie{Name: "switchboard_session", Value: tc.session})
		if notice := strings.Contains(body, `id="sso-notice"`); notice != tc.owner {
			t.Errorf("%s: the notice of changes of single sign-on %v on Agents, want %v", tc.name, notice, tc.owner)
		}
	}
	res, body := do(t, c, http.MethodGet, srv.URL+"/static/sso.js", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "/api/sso") {
		t.Errorf("GET /static/sso.js: %d", res.StatusCode)
	}
}
