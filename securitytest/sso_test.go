package securitytest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/identity"
	"github.com/switchboard-hub/switchboard/internal/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
	"github.com/switchboard-hub/switchboard/tenants"
)

// TestSSOSecretNeverAnswered: the single sign-on client secret goes in once and never
// comes out, not even to the tenant's owner: not in the settings, not in the answer
// to a change (the second one updates the row in place, keeping the secret), not in
// the audit log that records the change.
func TestSSOSecretNeverAnswered(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ssoSecretNeverAnswered(t, newHub(t, db))
	})
}

func ssoSecretNeverAnswered(t *testing.T, h *hub) {
	f := h.seed()
	body := `{"issuer":"` + h.idp.Issuer() + `","client_id":"victim-sso-client","client_secret":"` + victimSSOSecret + `","allowed_domains":["victim.test","victim.example"]}`
	answers := map[string][]byte{}
	status, _, b := h.do(f.owner, http.MethodPut, "/api/sso", body, nil)
	if status != http.StatusOK {
		t.Fatalf("PUT /api/sso: %d %s", status, b)
	}
	answers["PUT with a secret"] = b
	status, _, b = h.do(f.owner, http.MethodPut, "/api/sso", `{"issuer":"`+h.idp.Issuer()+`","client_id":"victim-sso-client","allowed_domains":["victim.test"]}`, nil)
	if status != http.StatusOK || !bytes.Contains(b, []byte(`"client_secret_set":true`)) {
		t.Fatalf("PUT /api/sso keeping the secret: %d %s", status, b)
	}
	answers["PUT keeping it"] = b
	_, _, answers["GET"] = h.do(f.owner, http.MethodGet, "/api/sso", "", nil)
	testwait.Until(t, "the sso_set events in the audit log", func() bool {
		_, _, b := h.do(f.owner, http.MethodGet, "/api/audit?kind=sso_set", "", nil)
		answers["audit"] = b
		return bytes.Count(b, []byte(`"sso_set"`)) >= 3
	})
	for name, b := range answers {
		if bytes.Contains(b, []byte(victimSSOSecret)) {
			t.Errorf("%s answers the client secret: %s", name, b)
		}
	}
}

// TestSSOAdminCannotBecomeOwner: an admin may not point single sign-on at an identity
// provider they run (nor read or remove it): 403 naming the owner, nothing changed,
// no change for the owners to acknowledge. And the tenant's own identity provider
// asserting the owner's or an admin's verified email opens no session while their
// account is not linked to it, while a member of an allowed domain still signs in.
func TestSSOAdminCannotBecomeOwner(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ssoAdminCannotBecomeOwner(t, newHub(t, db))
	})
}

func ssoAdminCannotBecomeOwner(t *testing.T, h *hub) {
	f := h.seed()
	ctx := context.Background()
	admin, err := h.tenants.CreateUser(ctx, f.victimTenant, "admin@victim.test", switchboard.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	adminKey, _, err := h.tenants.CreateKey(ctx, f.victimTenant, admin.ID, "k", false)
	if err != nil {
		t.Fatal(err)
	}
	attacker := oauthtest.NewOIDC(t, oauthtest.OIDCOptions{ClientID: "attacker-client", ClientSecret: "attacker-secret",
		RedirectURI: "https://hub.example.com" + identity.SSOCallbackPath})
	for _, req := range []struct{ method, path, body string }{
		{http.MethodPut, "/api/sso", `{"issuer":"` + attacker.Issuer() + `","client_id":"attacker-client","client_secret":"attacker-secret","allowed_domains":["victim.test"]}`},
		{http.MethodGet, "/api/sso", ""},
		{http.MethodDelete, "/api/sso", ""},
		{http.MethodGet, "/api/sso/changes", ""},
		{http.MethodPost, "/api/sso/changes/" + f.ssoChangeID + "/acknowledge", ""},
		{http.MethodGet, "/api/sso/links", ""},
	} {
		status, _, b := h.do(adminKey, req.method, req.path, req.body, nil)
		if status != http.StatusForbidden || !bytes.Contains(b, []byte("managed by a tenant owner")) {
			t.Errorf("%s %s as an admin: %d %s, want 403 naming the owner", req.method, req.path, status, b)
		}
	}
	var sso struct {
		Issuer string `json:"issuer"`
	}
	h.want(f.owner, http.MethodGet, "/api/sso", "", http.StatusOK, &sso)
	if sso.Issuer != h.idp.Issuer() {
		t.Errorf("the victim's issuer after the admin's attempt: %s", sso.Issuer)
	}
	var changes struct {
		Changes []struct{ ID string } `json:"changes"`
	}
	h.want(f.owner, http.MethodGet, "/api/sso/changes", "", http.StatusOK, &changes)
	if len(changes.Changes) != 1 {
		t.Errorf("the owner's changes after the admin's attempt: %+v, want only the set-up", changes.Changes)
	}
	for _, req := range attacker.Requests() {
		t.Errorf("the hub reached the attacker's identity provider: %+v", req)
	}

	for _, tc := range []struct {
		name, email string
		signedIn    bool
	}{
		{"owner", f.ownerEmail, false},
		{"admin", "admin@victim.test", false},
		{"member", "member@victim.test", true},
	} {
		status, session, body := h.ssoSignIn(t, f.victimSlug, &oauthtest.Person{Subject: "idp-" + tc.name, Email: tc.email, EmailVerified: true})
		if tc.signedIn && (status != http.StatusSeeOther || session == "") {
			t.Errorf("the member's single sign-on: %d %s", status, body)
		}
		if !tc.signedIn && (status != http.StatusForbidden || session != "" || !strings.Contains(body, "Link single sign-on")) {
			t.Errorf("single sign-on as the unlinked %s: %d, session %q, %s; want 403 saying to link, and no session", tc.name, status, session, body)
		}
	}
}

// ssoSignIn runs a single sign-on to the workspace through the engine, the identity
// provider signing person in, and returns the callback's status, the session it set
// ("" for none) and its page. The engine's public URL is https, so the browser's
// cookie is carried by hand.
func (h *hub) ssoSignIn(t *testing.T, slug string, person *oauthtest.Person) (int, string, string) {
	t.Helper()
	h.idp.SignIn(person)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(h.srv.URL + identity.SSOStartPath + "?workspace=" + url.QueryEscape(slug))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var state *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "switchboard_sso" {
			state = ck
		}
	}
	if res.StatusCode != http.StatusSeeOther || state == nil {
		t.Fatalf("start single sign-on: %d, state cookie %v", res.StatusCode, state)
	}
	res, err = c.Get(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	callback, ok := strings.CutPrefix(res.Header.Get("Location"), "https://hub.example.com")
	if res.StatusCode != http.StatusFound || !ok {
		t.Fatalf("the identity provider: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	req, err := http.NewRequest(http.MethodGet, h.srv.URL+callback, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: state.Name, Value: state.Value})
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	session := ""
	for _, ck := range res.Cookies() {
		if ck.Name == tenants.SessionCookie && ck.MaxAge > 0 {
			session = ck.Value
		}
	}
	return res.StatusCode, session, string(body)
}
