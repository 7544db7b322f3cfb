package identity

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/oauthtest"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/tenants"
)

const ssoSecret = "idp-client-secret-0123456789"

// ssoRig is a rig whose tenant acme signs in with an OpenID provider the test runs.
type ssoRig struct {
	*rig
	op *oauthtest.OIDC
}

func newSSORig(t *testing.T, in SSOInput) *ssoRig {
	t.Helper()
	r := newRig(t)
	op := oauthtest.NewOIDC(t, oauthtest.OIDCOptions{ClientID: "switchboard-acme", ClientSecret: ssoSecret, RedirectURI: r.base + SSOCallbackPath})
	in.Issuer, in.ClientID = op.Issuer(), "switchboard-acme"
	if in.ClientSecret == "" {
		in.ClientSecret = ssoSecret
	}
	if _, err := r.srv.SetSSO(context.Background(), r.admin(), in); err != nil {
		t.Fatalf("set single sign-on: %v", err)
	}
	return &ssoRig{rig: r, op: op}
}

// admin is acme's owner, as the API sees them.
func (r *rig) admin() switchboard.Principal {
	return switchboard.Principal{TenantID: r.acme.ID, TenantSlug: r.acme.Slug, Kind: switchboard.PrincipalUser, UserID: r.ada.ID, Role: r.ada.Role, KeyID: "key_ada"}
}

// browser is a person's browser: it keeps cookies and follows no redirects.
type browser struct {
	t *testing.T
	c *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(u string) (*http.Response, string) {
	b.t.Helper()
	res, err := b.c.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(body)
}

// startSSO starts a sign-in to acme and follows it to the provider, which answers
// with a redirect to the callback; it returns that callback URL.
func (r *ssoRig) startSSO(b *browser, next string) string {
	r.t.Helper()
	res, body := b.get(r.base + SSOStartPath + "?workspace=acme&next=" + url.QueryEscape(next))
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), r.op.URL+"/authorize?") {
		r.t.Fatalf("start: %d %s %s, want a 303 to the provider", res.StatusCode, res.Header.Get("Location"), body)
	}
	auth, _ := url.Parse(res.Header.Get("Location"))
	q := auth.Query()
	for _, k := range []string{"state", "nonce", "code_challenge"} {
		if q.Get(k) == "" {
			r.t.Errorf("the authorization request has no %s: %s", k, auth)
		}
	}
	if q.Get("code_challenge_method") != "S256" || q.Get("redirect_uri") != r.base+SSOCallbackPath || !strings.Contains(q.Get("scope"), "openid") {
		r.t.Errorf("authorization request %s: want S256, the callback as redirect_uri, scope openid", auth)
	}
	res, body = b.get(auth.String())
	if res.StatusCode != http.StatusFound || !strings.HasPrefix(res.Header.Get("Location"), r.base+SSOCallbackPath+"?") {
		r.t.Fatalf("provider: %d %s %s, want a redirect to the callback", res.StatusCode, res.Header.Get("Location"), body)
	}
	return res.Header.Get("Location")
}

// linkSSO links a user of acme through Settings: signed in, they confirm their
// password, and the provider asserts the person it signs in next. It returns the
// answer that ends the flow: the callback's, or an earlier refusal.
func (r *ssoRig) linkSSO(t *testing.T, u tenants.User, password string) (*http.Response, string) {
	t.Helper()
	b := newBrowser(t)
	tok := r.signIn(r.acme, u)
	b.c.Jar.SetCookies(mustURL(t, r.base), []*http.Cookie{{Name: tenants.SessionCookie, Value: tok, Path: "/"}})
	res, err := b.c.PostForm(r.base+SSOLinkPath, url.Values{"csrf": {r.sess.CSRFToken(tok)}, "password": {password}})
	if err != nil {
		r.t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), r.op.URL+"/authorize?") {
		return res, string(raw)
	}
	res, body := b.get(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || !strings.HasPrefix(res.Header.Get("Location"), r.base+SSOCallbackPath+"?") {
		r.t.Fatalf("provider: %d %s %s, want a redirect to the callback", res.StatusCode, res.Header.Get("Location"), body)
	}
	return b.get(res.Header.Get("Location"))
}

// sessionOf returns the session cookie a response set, or "".
func sessionOf(res *http.Response) string {
	for _, c := range res.Cookies() {
		if c.Name == tenants.SessionCookie && c.MaxAge > 0 {
			return c.Value
		}
	}
	return ""
}

func (r *rig) users(tenant switchboard.TenantID) map[string]tenants.User {
	r.t.Helper()
	us, err := r.store.ListUsers(context.Background(), tenant)
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[string]tenants.User{}
	for _, u := range us {
		out[u.Email] = u
	}
	return out
}

// TestSSOSignIn: a person of an allowed domain signs in with the tenant's OpenID
// provider: the first time they join as a member, then they are the same user; the
// session works, the browser goes where it was going, and each sign-in is audited.
// The code is exchanged with the client secret and the PKCE verifier.
func TestSSOSignIn(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"Example.com"}})
	r.op.SignIn(&oauthtest.Person{Subject: "u-1", Email: "Cy@Example.com", EmailVerified: true})
	for round := range 2 {
		b := newBrowser(t)
		res, body := b.get(r.startSSO(b, "/agents/agt_1"))
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/agents/agt_1" {
			t.Fatalf("round %d: callback %d %s %s, want a 303 to /agents/agt_1", round, res.StatusCode, res.Header.Get("Location"), body)
		}
		token := sessionOf(res)
		p, err := r.store.AuthenticateSession(context.Background(), token)
		if err != nil {
			t.Fatalf("round %d: the session does not work: %v", round, err)
		}
		cy, ok := r.users(r.acme.ID)["cy@example.com"]
		if !ok || p.UserID != cy.ID || p.TenantID != r.acme.ID || cy.Role != switchboard.RoleMember {
			t.Fatalf("round %d: session %+v, user %+v: want cy, a member of acme", round, p, cy)
		}
	}
	if n := len(r.users(r.acme.ID)); n != 2 {
		t.Errorf("acme has %d users after two sign-ins of one person, want 2 (ada and cy)", n)
	}
	events := r.audit.of(audit.KindSSOSignIn)
	if len(events) != 2 || events[0].Outcome != "ok" || !strings.Contains(events[0].Detail, "joined as member by domain") || strings.Contains(events[1].Detail, "joined") {
		t.Errorf("sso sign-in events: %+v", events)
	}
	var exchanged bool
	for _, req := range r.op.Requests() {
		if req.Path != "/token" {
			continue
		}
		exchanged = true
		if req.Form.Get("code_verifier") == "" || req.Form.Get("redirect_uri") != r.base+SSOCallbackPath || req.Auth == "" {
			t.Errorf("token request %+v: want the PKCE verifier, the callback and the client's credentials", req)
		}
	}
	if !exchanged {
		t.Error("the code was never exchanged")
	}
}

// TestSSOStateBoundToBrowser: the callback is refused unless the browser brings back
// the state it started with, and works once: another browser with the same callback
// URL (login CSRF), a replay, and a made-up state all get no session.
func TestSSOStateBoundToBrowser(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com"}})
	r.op.SignIn(&oauthtest.Person{Subject: "u-1", Email: "cy@example.com", EmailVerified: true})
	b := newBrowser(t)
	callback := r.startSSO(b, "/")

	other := newBrowser(t)
	if res, body := other.get(callback); res.StatusCode != http.StatusBadRequest || sessionOf(res) != "" || !strings.Contains(body, "did not start in this browser") {
		t.Errorf("the callback in another browser: %d %s", res.StatusCode, body)
	}
	forged, _ := url.Parse(callback)
	q := forged.Query()
	q.Set("state", "made-up-state")
	forged.RawQuery = q.Encode()
	if res, _ := b.get(forged.String()); res.StatusCode != http.StatusBadRequest || sessionOf(res) != "" {
		t.Errorf("a made-up state: %d", res.StatusCode)
	}
	// The made-up state cleared the browser's cookie: start again, then replay.
	callback = r.startSSO(b, "/")
	if res, body := b.get(callback); res.StatusCode != http.StatusSeeOther || sessionOf(res) == "" {
		t.Fatalf("the real callback: %d %s", res.StatusCode, body)
	}
	b.c.Jar.SetCookies(mustURL(t, r.base+SSOCallbackPath), []*http.Cookie{{Name: ssoCookie, Value: mustURL(t, callback).Query().Get("state"), Path: SSOCallbackPath}})
	if res, _ := b.get(callback); res.StatusCode != http.StatusBadRequest || sessionOf(res) != "" {
		t.Errorf("a replayed callback: %d, want 400 and no session", res.StatusCode)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSSORefusesBadIDTokens: an ID token that is not for this client, expired, from
// another issuer, signed by a key the provider never published, with another
// sign-in's nonce, or without a verified email signs nobody in, and says why.
func TestSSORefusesBadIDTokens(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com"}})
	r.op.SignIn(&oauthtest.Person{Subject: "u-1", Email: "cy@example.com", EmailVerified: true})
	for _, tc := range []struct {
		name   string
		tamper func(map[string]any)
		forge  bool
		want   string
	}{
		{name: "wrong audience", tamper: func(c map[string]any) { c["aud"] = "another-client" }, want: "audience"},
		{name: "expired", tamper: func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() }, want: "expired"},
		{name: "wrong issuer", tamper: func(c map[string]any) { c["iss"] = "https://evil.example" }, want: "issued by a different provider"},
		{name: "wrong nonce", tamper: func(c map[string]any) { c["nonce"] = "another-sign-ins-nonce" }, want: "nonce differs"},
		{name: "no nonce", tamper: func(c map[string]any) { delete(c, "nonce") }, want: "nonce differs"},
		{name: "forged signature", forge: true, want: "signature"},
		{name: "email not verified", tamper: func(c map[string]any) { c["email_verified"] = false }, want: "has not verified your email"},
		{name: "email_verified missing", tamper: func(c map[string]any) { delete(c, "email_verified") }, want: "has not verified your email"},
		{name: "no email", tamper: func(c map[string]any) { delete(c, "email") }, want: "did not tell Switchboard your email"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.forge {
				r.op.ForgeNext()
			} else {
				r.op.TamperNext(tc.tamper)
			}
			b := newBrowser(t)
			res, body := b.get(r.startSSO(b, "/"))
			if res.StatusCode != http.StatusForbidden || sessionOf(res) != "" || !strings.Contains(body, tc.want) {
				t.Errorf("status %d, session %q, page %s; want 403 saying %q", res.StatusCode, sessionOf(res), body, tc.want)
			}
		})
	}
	if _, ok := r.users(r.acme.ID)["cy@example.com"]; ok {
		t.Error("a refused ID token created the user")
	}
	for _, e := range r.audit.of(audit.KindSSOSignIn) {
		if e.Outcome == "ok" {
			t.Errorf("a refused sign-in was audited as ok: %+v", e)
		}
	}
}

// TestSSODomains: someone whose domain the tenant does not allow is refused with a
// page that says so, and nothing is created; an admin's invitation lets them in with
// the invitation's role, which links their account as they join, so they sign in
// again; an existing user of any domain signs in.
func TestSSODomains(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com"}})
	ctx := context.Background()
	r.op.SignIn(&oauthtest.Person{Subject: "u-2", Email: "dee@contractor.org", EmailVerified: true})
	b := newBrowser(t)
	res, body := b.get(r.startSSO(b, "/"))
	if res.StatusCode != http.StatusForbidden || sessionOf(res) != "" || !strings.Contains(body, "people of contractor.org may not join it") {
		t.Fatalf("a disallowed domain: %d %s", res.StatusCode, body)
	}
	if _, ok := r.users(r.acme.ID)["dee@contractor.org"]; ok {
		t.Fatal("a disallowed domain's person was created")
	}
	refused := r.audit.of(audit.KindSSOSignIn)
	if len(refused) != 1 || refused[0].Outcome != "forbidden" || refused[0].Principal != "sso:dee@contractor.org" || refused[0].TenantID != r.acme.ID {
		t.Errorf("refusal events: %+v", refused)
	}

	if _, _, err := r.store.CreateInvitation(ctx, r.acme.ID, "user:"+r.ada.ID, "dee@contractor.org", switchboard.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	b = newBrowser(t)
	if res, body := b.get(r.startSSO(b, "/")); res.StatusCode != http.StatusSeeOther || sessionOf(res) == "" {
		t.Fatalf("an invited person: %d %s", res.StatusCode, body)
	}
	if dee := r.users(r.acme.ID)["dee@contractor.org"]; dee.Role != switchboard.RoleAdmin {
		t.Errorf("the invited person joined as %+v, want the invitation's role admin", dee)
	}
	// Joining as an admin by the invitation linked the account: dee signs in again.
	b = newBrowser(t)
	if res, body := b.get(r.startSSO(b, "/")); res.StatusCode != http.StatusSeeOther || sessionOf(res) == "" {
		t.Errorf("the invited admin's second sign-in: %d %s", res.StatusCode, body)
	}
	invs, _ := r.store.ListInvitations(ctx, r.acme.ID)
	for _, inv := range invs {
		if inv.Email == "dee@contractor.org" && inv.UsedAt == nil {
			t.Error("the invitation is still pending after the person joined with it")
		}
	}

	// ada (example.com is allowed anyway) and an existing user of another domain.
	if _, err := r.store.CreateUser(ctx, r.acme.ID, "eve@partner.net", switchboard.RoleMember); err != nil {
		t.Fatal(err)
	}
	r.op.SignIn(&oauthtest.Person{Subject: "u-3", Email: "eve@partner.net", EmailVerified: true})
	b = newBrowser(t)
	if res, body := b.get(r.startSSO(b, "/")); res.StatusCode != http.StatusSeeOther || sessionOf(res) == "" {
		t.Errorf("an existing user of another domain: %d %s", res.StatusCode, body)
	}
}

// TestSSOLocalPasswordsOff: with passwords off, acme refuses every password sign-in
// (a right password included) and invitation links, saying to use single sign-on;
// the sign-in page learns to show only the button; beta, without single sign-on, is
// unaffected; turning passwords on again lets the password in.
func TestSSOLocalPasswordsOff(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com"}})
	ctx := context.Background()
	if err := r.store.SetPassword(ctx, r.acme.ID, r.ada.ID, "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	if err := r.store.SetPassword(ctx, r.beta.ID, r.bob.ID, "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.store.SignIn(ctx, "acme", "ada@example.com", "correct horse battery"); err != nil {
		t.Fatalf("a password with passwords on: %v", err)
	}
	link, _, err := r.store.CreateInvitation(ctx, r.acme.ID, "user:"+r.ada.ID, "fay@example.com", switchboard.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	// ada, an owner, links her account first: then passwords may go.
	r.op.SignIn(&oauthtest.Person{Subject: "u-ada", Email: "ada@example.com", EmailVerified: true})
	if res, body := r.linkSSO(t, r.ada, "correct horse battery"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/settings" {
		t.Fatalf("link ada: %d %s %s", res.StatusCode, res.Header.Get("Location"), body)
	}

	in := SSOInput{Issuer: r.op.Issuer(), ClientID: "switchboard-acme", AllowedDomains: []string{"example.com"}, LocalPasswordsOff: true}
	settings, err := r.srv.SetSSO(ctx, r.admin(), in)
	if err != nil || !settings.LocalPasswordsOff || !settings.ClientSecretSet {
		t.Fatalf("turn passwords off (secret kept): %+v %v", settings, err)
	}
	for _, email := range []string{"ada@example.com", "nobody@example.com"} {
		_, _, err := r.store.SignIn(ctx, "acme", email, "correct horse battery")
		if e := switchboard.AsError(err); e.Code != switchboard.CodeForbidden || !strings.Contains(e.Message, "single sign-on") {
			t.Errorf("password sign-in of %s with passwords off: %v, want forbidden naming single sign-on", email, err)
		}
	}
	if _, _, _, err := r.store.UseLink(ctx, link, "a new password 123"); switchboard.CodeOf(err) != switchboard.CodeForbidden {
		t.Errorf("an invitation link with passwords off: %v, want forbidden", err)
	}
	if sso, passwords, err := r.srv.SignInMethods(ctx, "acme"); err != nil || !sso || passwords {
		t.Errorf("acme's sign-in methods: sso %v, passwords %v, %v; want single sign-on only", sso, passwords, err)
	}
	if sso, passwords, err := r.srv.SignInMethods(ctx, "beta"); err != nil || sso || !passwords {
		t.Errorf("beta's sign-in methods: sso %v, passwords %v, %v; want passwords only", sso, passwords, err)
	}
	if _, _, err := r.store.SignIn(ctx, "beta", "bob@example.com", "correct horse battery"); err != nil {
		t.Errorf("beta's password sign-in: %v", err)
	}
	// ada signs in with single sign-on instead.
	b := newBrowser(t)
	if res, body := b.get(r.startSSO(b, "/")); res.StatusCode != http.StatusSeeOther || sessionOf(res) == "" {
		t.Errorf("single sign-on with passwords off: %d %s", res.StatusCode, body)
	}

	in.LocalPasswordsOff = false
	if _, err := r.srv.SetSSO(ctx, r.admin(), in); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.store.SignIn(ctx, "acme", "ada@example.com", "correct horse battery"); err != nil {
		t.Errorf("a password after passwords are on again: %v", err)
	}
}

// TestSSOSettings: only the tenant's owners read and set single sign-on; bad input is
// refused naming the field, with nothing stored; the issuer must answer discovery; the
// client secret is sealed, never shown, and kept when an update leaves it out.
func TestSSOSettings(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com", "@Example.COM", "corp.example.org"}})
	ctx := context.Background()
	s, err := r.srv.SSO(ctx, r.admin())
	if err != nil {
		t.Fatal(err)
	}
	if !s.Configured || s.Issuer != r.op.Issuer() || !s.ClientSecretSet || strings.Join(s.AllowedDomains, " ") != "example.com corp.example.org" ||
		s.RedirectURI != r.base+SSOCallbackPath || s.SignInURL != r.base+"/signin?workspace=acme" {
		t.Errorf("settings %+v", s)
	}
	raw, _ := json.Marshal(s)
	if strings.Contains(string(raw), ssoSecret) {
		t.Errorf("the settings carry the client secret: %s", raw)
	}
	var row ssoConfig
	if err := r.db.Where("tenant_id = ?", r.acme.ID).Take(&row).Error; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(row.Sealed), ssoSecret) {
		t.Error("the client secret is stored in the clear")
	}

	member := switchboard.Principal{TenantID: r.acme.ID, TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: "usr_m", Role: switchboard.RoleMember}
	agent := switchboard.Principal{TenantID: r.acme.ID, TenantSlug: "acme", Kind: switchboard.PrincipalAgent, AgentID: "agt_a", UserID: r.ada.ID, Role: switchboard.RoleOwner}
	for _, p := range []switchboard.Principal{member, agent} {
		if _, err := r.srv.SSO(ctx, p); switchboard.CodeOf(err) != switchboard.CodeForbidden {
			t.Errorf("%s reads single sign-on: %v", p.ID(), err)
		}
		if _, err := r.srv.SetSSO(ctx, p, SSOInput{Issuer: r.op.Issuer(), ClientID: "x", ClientSecret: "y"}); switchboard.CodeOf(err) != switchboard.CodeForbidden {
			t.Errorf("%s sets single sign-on: %v", p.ID(), err)
		}
		if err := r.srv.DeleteSSO(ctx, p); switchboard.CodeOf(err) != switchboard.CodeForbidden {
			t.Errorf("%s removes single sign-on: %v", p.ID(), err)
		}
	}

	good := SSOInput{Issuer: r.op.Issuer(), ClientID: "switchboard-acme", AllowedDomains: []string{"example.com"}}
	for _, tc := range []struct {
		field string
		edit  func(*SSOInput)
	}{
		{"issuer", func(in *SSOInput) { in.Issuer = "http://idp.example.com" }},
		{"issuer", func(in *SSOInput) { in.Issuer = "https://idp.example.com/?x=1" }},
		{"issuer", func(in *SSOInput) { in.Issuer = r.op.Issuer() + "/nothing-here" }}, // no discovery there
		{"client_id", func(in *SSOInput) { in.ClientID = " " }},
		{"allowed_domains[1]", func(in *SSOInput) { in.AllowedDomains = []string{"example.com", "not a domain"} }},
		{"allowed_domains[0]", func(in *SSOInput) { in.AllowedDomains = []string{"ada@example.com"} }},
	} {
		in := good
		tc.edit(&in)
		_, err := r.srv.SetSSO(ctx, r.admin(), in)
		if e := switchboard.AsError(err); e.Code != switchboard.CodeInvalid || e.Field != tc.field {
			t.Errorf("input %+v: %v, want invalid %s", in, err, tc.field)
		}
	}
	after, _ := r.srv.SSO(ctx, r.admin())
	if after.UpdatedAt == nil || !after.UpdatedAt.Equal(*s.UpdatedAt) || len(after.AllowedDomains) != 2 {
		t.Errorf("refused input changed the settings: %+v", after)
	}

	// The beta tenant's admin needs a secret the first time, and sees nothing of acme's.
	bob := switchboard.Principal{TenantID: r.beta.ID, TenantSlug: "beta", Kind: switchboard.PrincipalUser, UserID: r.bob.ID, Role: switchboard.RoleOwner}
	if bs, err := r.srv.SSO(ctx, bob); err != nil || bs.Configured || bs.Issuer != "" {
		t.Errorf("beta's settings: %+v %v", bs, err)
	}
	if _, err := r.srv.SetSSO(ctx, bob, good); switchboard.AsError(err).Field != "client_secret" {
		t.Errorf("beta's first settings without a secret: %v, want invalid client_secret", err)
	}

	set := r.audit.of(audit.KindSSOSet)
	if len(set) != 1 || set[0].Principal != "user:"+r.ada.ID || strings.Contains(set[0].Detail, ssoSecret) {
		t.Errorf("sso_set events: %+v", set)
	}
	if err := r.srv.DeleteSSO(ctx, r.admin()); err != nil {
		t.Fatal(err)
	}
	if d := r.audit.of(audit.KindSSODeleted); len(d) != 1 {
		t.Errorf("sso_deleted events: %+v", d)
	}
	// A workspace without single sign-on and one that does not exist answer alike.
	b := newBrowser(t)
	res, acmeBody := b.get(r.base + SSOStartPath + "?workspace=acme")
	if res.StatusCode != http.StatusNotFound || !strings.Contains(acmeBody, "has no single sign-on") {
		t.Errorf("start after removal: %d %s", res.StatusCode, acmeBody)
	}
	res, noneBody := b.get(r.base + SSOStartPath + "?workspace=acme-not")
	if res.StatusCode != http.StatusNotFound || strings.ReplaceAll(noneBody, "acme-not", "acme") != acmeBody {
		t.Errorf("start for a workspace that does not exist: %d %s\nwant the page of one without single sign-on:\n%s", res.StatusCode, noneBody, acmeBody)
	}
}

// TestSSOSecretsRotate: `keys rotate` re-seals the client secret and the verifiers
// of sign-ins under way; a sign-in started before the rotation finishes after it.
func TestSSOSecretsRotate(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com"}})
	r.op.SignIn(&oauthtest.Person{Subject: "u-1", Email: "cy@example.com", EmailVerified: true})
	b := newBrowser(t)
	callback := r.startSSO(b, "/")
	kr := r.kr
	res, err := keyring.Rotate(context.Background(), r.db, kr, SSOSealedRecords(r.db, kr), keyring.RotateOptions{})
	if err != nil || res.Resealed != 2 {
		t.Fatalf("rotate: %+v %v, want the secret and the verifier re-sealed", res, err)
	}
	if res, body := b.get(callback); res.StatusCode != http.StatusSeeOther || sessionOf(res) == "" {
		t.Errorf("sign-in after the rotation: %d %s", res.StatusCode, body)
	}
}

// TestSSOStartLimited: starting single sign-on stores a sign-in under way, so one
// client address may start only so many: then 429 with Retry-After, nothing stored.
func TestSSOStartLimited(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com"}})
	r.srv.ssoRate = limits.Rate{PerSecond: 1.0 / 3600, Burst: 3}
	b := newBrowser(t)
	for i := range 3 {
		if res, body := b.get(r.base + SSOStartPath + "?workspace=acme"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("start %d: %d %s", i, res.StatusCode, body)
		}
	}
	var before int64
	r.db.Model(&ssoLogin{}).Count(&before)
	res, body := b.get(r.base + SSOStartPath + "?workspace=acme")
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || !strings.Contains(body, "Too many sign-ins") {
		t.Errorf("a start past the limit: %d (Retry-After %q) %s", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	var after int64
	r.db.Model(&ssoLogin{}).Count(&after)
	if before != 3 || after != before {
		t.Errorf("sign-ins under way: %d before the refused start, %d after; want 3 and 3", before, after)
	}
}
