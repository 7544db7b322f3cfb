package identity

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/oauthtest"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/tenants"
)

const adaPassword = "correct horse battery"

// addUser makes a user of acme.
func (r *ssoRig) addUser(t *testing.T, email string, role switchboard.Role) tenants.User {
	t.Helper()
	u, err := r.store.CreateUser(context.Background(), r.acme.ID, email, role)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// ssoAs signs in to acme through the provider as person, in a new browser, and
// returns the callback's answer.
func (r *ssoRig) ssoAs(t *testing.T, person *oauthtest.Person) (*http.Response, string) {
	t.Helper()
	r.op.SignIn(person)
	b := newBrowser(t)
	return b.get(r.startSSO(b, "/"))
}

// adaWithPassword gives ada, acme's owner, a password (adaPassword), and has the
// provider sign her in next; it returns her there.
func (r *ssoRig) adaWithPassword(t *testing.T) *oauthtest.Person {
	t.Helper()
	if err := r.store.SetPassword(context.Background(), r.acme.ID, r.ada.ID, adaPassword); err != nil {
		t.Fatal(err)
	}
	ada := &oauthtest.Person{Subject: "idp-ada", Email: "ada@example.com", EmailVerified: true}
	r.op.SignIn(ada)
	return ada
}

// sessionsOf counts a user's UI sessions.
func (r *rig) sessionsOf(userID string) int64 {
	var n int64
	if err := r.db.Model(&tenants.Session{}).Where("user_id = ?", userID).Count(&n).Error; err != nil {
		r.t.Fatal(err)
	}
	return n
}

// TestSSOUnlinkedOwnerAndAdminRefused: the identity provider asserting the verified
// email of an owner or an admin whose account is not linked to it opens nothing: no
// session, a page that says to sign in with the password and link single sign-on, a
// refusal in the audit log, and a pending link for an owner to approve. A member's
// account opens as before.
func TestSSOUnlinkedOwnerAndAdminRefused(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com"}})
	dan := r.addUser(t, "dan@example.com", switchboard.RoleAdmin)
	cy := r.addUser(t, "cy@example.com", switchboard.RoleMember)
	for _, tc := range []struct {
		name string
		user tenants.User
	}{{"owner", r.ada}, {"admin", dan}} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := r.ssoAs(t, &oauthtest.Person{Subject: "idp-" + tc.name, Email: tc.user.Email, EmailVerified: true})
			if res.StatusCode != http.StatusForbidden || sessionOf(res) != "" || !strings.Contains(body, "Sign in with your password, then choose Link single sign-on in Settings") {
				t.Errorf("status %d, session %q, page %s; want 403 saying to link single sign-on", res.StatusCode, sessionOf(res), body)
			}
			if n := r.sessionsOf(tc.user.ID); n != 0 {
				t.Errorf("%d sessions of the %s after a refused single sign-on", n, tc.name)
			}
		})
	}
	refused := 0
	for _, e := range r.audit.of(audit.KindSSOSignIn) {
		if e.Outcome == "ok" {
			t.Errorf("an unlinked sign-in was audited as ok: %+v", e)
		}
		if e.Outcome == "forbidden" && strings.Contains(e.Detail, "linked") {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("%d refusals naming the link in the audit log, want 2", refused)
	}
	links, err := r.srv.SSOLinks(context.Background(), r.admin())
	if err != nil {
		t.Fatal(err)
	}
	pending := map[string]string{}
	for _, l := range links {
		if l.Pending {
			pending[l.UserID] = l.Subject
		}
	}
	if len(links) != 2 || pending[r.ada.ID] != "idp-owner" || pending[dan.ID] != "idp-admin" {
		t.Errorf("links %+v, want the two refused sign-ins pending", links)
	}

	res, body := r.ssoAs(t, &oauthtest.Person{Subject: "idp-cy", Email: cy.Email, EmailVerified: true})
	if res.StatusCode != http.StatusSeeOther || sessionOf(res) == "" {
		t.Errorf("a member's single sign-on: %d %s", res.StatusCode, body)
	}
}

// TestSSOLinkedOwnerSignsIn: an owner who confirms their password in Settings and
// signs in at the identity provider is linked to the subject it asserts; then single
// sign-on opens their account, with that subject only. A wrong password, a form
// without the session's CSRF token or without a session, and the provider asserting
// another email link nothing.
func TestSSOLinkedOwnerSignsIn(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com"}})
	ctx := context.Background()
	ada := r.adaWithPassword(t)
	if res, body := r.linkSSO(t, r.ada, "not her password"); res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "password is wrong") {
		t.Errorf("link with a wrong password: %d %s", res.StatusCode, body)
	}
	b := newBrowser(t)
	tok := r.signIn(r.acme, r.ada)
	b.c.Jar.SetCookies(mustURL(t, r.base), []*http.Cookie{{Name: tenants.SessionCookie, Value: tok, Path: "/"}})
	for name, form := range map[string]url.Values{
		"without the CSRF token": {"password": {adaPassword}},
		"with another's token":   {"password": {adaPassword}, "csrf": {r.sess.CSRFToken("another-session")}},
	} {
		res, err := b.c.PostForm(r.base+SSOLinkPath, form)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("link %s: %d, want 403", name, res.StatusCode)
		}
	}
	res, err := http.PostForm(r.base+SSOLinkPath, url.Values{"password": {adaPassword}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("link without a session: %d, want 401", res.StatusCode)
	}
	r.op.SignIn(&oauthtest.Person{Subject: "idp-cy", Email: "cy@example.com", EmailVerified: true})
	if res, body := r.linkSSO(t, r.ada, adaPassword); res.StatusCode != http.StatusForbidden || !strings.Contains(body, "signed you in as cy@example.com") {
		t.Errorf("link as another person at the provider: %d %s", res.StatusCode, body)
	}
	if links, _ := r.srv.SSOLinks(ctx, r.admin()); len(links) != 0 {
		t.Fatalf("refused links were stored: %+v", links)
	}

	r.op.SignIn(ada)
	if res, body := r.linkSSO(t, r.ada, adaPassword); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/settings" || sessionOf(res) != "" {
		t.Fatalf("link: %d %s %s, want a 303 back to Settings and no new session", res.StatusCode, res.Header.Get("Location"), body)
	}
	linked := r.audit.of(audit.KindSSOLinked)
	if n := len(linked); n == 0 || linked[n-1].Outcome != "ok" || linked[n-1].Principal != "user:"+r.ada.ID {
		t.Errorf("sso_linked events: %+v", linked)
	}
	res, body := r.ssoAs(t, ada)
	if res.StatusCode != http.StatusSeeOther || sessionOf(res) == "" {
		t.Fatalf("the linked owner's single sign-on: %d %s", res.StatusCode, body)
	}
	p, err := r.store.AuthenticateSession(ctx, sessionOf(res))
	if err != nil || p.UserID != r.ada.ID || p.Role != switchboard.RoleOwner {
		t.Errorf("the session %+v %v, want ada's", p, err)
	}
	// Another account at the provider with ada's email is not the one linked.
	if res, body := r.ssoAs(t, &oauthtest.Person{Subject: "idp-impostor", Email: "ada@example.com", EmailVerified: true}); res.StatusCode != http.StatusForbidden || sessionOf(res) != "" {
		t.Errorf("another subject with the owner's email: %d %s", res.StatusCode, body)
	}
}

// TestSSOOwnerApprovesLink: an admin's refused sign-in leaves a pending link; an admin
// may not approve it, an owner may, and then the admin signs in with that subject.
func TestSSOOwnerApprovesLink(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com"}})
	ctx := context.Background()
	dan := r.addUser(t, "dan@example.com", switchboard.RoleAdmin)
	person := &oauthtest.Person{Subject: "idp-dan", Email: dan.Email, EmailVerified: true}
	if res, body := r.ssoAs(t, person); res.StatusCode != http.StatusForbidden {
		t.Fatalf("unlinked admin: %d %s", res.StatusCode, body)
	}
	links, err := r.srv.SSOLinks(ctx, r.admin())
	if err != nil || len(links) != 1 || !links[0].Pending {
		t.Fatalf("links %+v %v, want dan's pending", links, err)
	}
	danP := switchboard.Principal{TenantID: r.acme.ID, TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: dan.ID, Role: dan.Role}
	if _, err := r.srv.ApproveSSOLink(ctx, danP, links[0].ID); switchboard.CodeOf(err) != switchboard.CodeForbidden {
		t.Errorf("the admin approves their own link: %v, want forbidden", err)
	}
	bob := switchboard.Principal{TenantID: r.beta.ID, TenantSlug: "beta", Kind: switchboard.PrincipalUser, UserID: r.bob.ID, Role: switchboard.RoleOwner}
	if _, err := r.srv.ApproveSSOLink(ctx, bob, links[0].ID); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("another tenant's owner approves it: %v, want not found", err)
	}
	if res, _ := r.ssoAs(t, person); res.StatusCode != http.StatusForbidden {
		t.Fatalf("still unlinked admin: %d", res.StatusCode)
	}
	l, err := r.srv.ApproveSSOLink(ctx, r.admin(), links[0].ID)
	if err != nil || l.Pending || l.LinkedBy != "owner:"+r.ada.ID {
		t.Fatalf("approve: %+v %v", l, err)
	}
	if _, err := r.srv.ApproveSSOLink(ctx, r.admin(), links[0].ID); switchboard.CodeOf(err) != switchboard.CodeConflict {
		t.Errorf("approve twice: %v, want conflict", err)
	}
	res, body := r.ssoAs(t, person)
	if res.StatusCode != http.StatusSeeOther || sessionOf(res) == "" {
		t.Errorf("the approved admin's single sign-on: %d %s", res.StatusCode, body)
	}
}

// TestSSONewIssuerBreaksLinks: pointing single sign-on at another identity provider
// removes every link to the former one: the linked owner is refused at the new one,
// and again after single sign-on points back. Passwords may go off only once the
// owner turning them off is linked to the issuer they set.
func TestSSONewIssuerBreaksLinks(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com"}})
	ctx := context.Background()
	ada := r.adaWithPassword(t)
	if res, body := r.linkSSO(t, r.ada, adaPassword); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("link: %d %s", res.StatusCode, body)
	}
	first := r.op
	second := oauthtest.NewOIDC(t, oauthtest.OIDCOptions{ClientID: "switchboard-acme", ClientSecret: ssoSecret, RedirectURI: r.base + SSOCallbackPath})
	in := SSOInput{Issuer: second.Issuer(), ClientID: "switchboard-acme", AllowedDomains: []string{"example.com"}, LocalPasswordsOff: true}
	if _, err := r.srv.SetSSO(ctx, r.admin(), in); switchboard.AsError(err).Field != "local_passwords_off" {
		t.Errorf("passwords off at an issuer the owner is not linked to: %v, want invalid local_passwords_off", err)
	}
	in.LocalPasswordsOff = false
	if _, err := r.srv.SetSSO(ctx, r.admin(), in); err != nil {
		t.Fatal(err)
	}
	if links, _ := r.srv.SSOLinks(ctx, r.admin()); len(links) != 0 {
		t.Errorf("links after a new issuer: %+v, want none", links)
	}
	r.op = second
	if res, body := r.ssoAs(t, ada); res.StatusCode != http.StatusForbidden || sessionOf(res) != "" {
		t.Errorf("the formerly linked owner at the new issuer: %d %s", res.StatusCode, body)
	}
	in.Issuer = first.Issuer()
	if _, err := r.srv.SetSSO(ctx, r.admin(), in); err != nil {
		t.Fatal(err)
	}
	r.op = first
	if res, body := r.ssoAs(t, ada); res.StatusCode != http.StatusForbidden || sessionOf(res) != "" {
		t.Errorf("the formerly linked owner back at the first issuer: %d %s", res.StatusCode, body)
	}
}

// TestSSOSaveLink: a user has one link per issuer; a pending one (a refused sign-in's
// request) replaces another pending one, never a link made, which a new link
// replaces. On every database the suite runs on.
func TestSSOSaveLink(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		s := New(Options{DB: db, Logger: slog.New(slog.DiscardHandler)})
		ctx := context.Background()
		save := func(subject string, pending bool) {
			t.Helper()
			l := ssoLink{ID: switchboard.NewID("ssk"), TenantID: "ten_a", UserID: "usr_a", Issuer: "https://idp.example.com", Subject: subject,
				Email: "a@example.com", LinkedBy: linkedByPassword, Pending: pending, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
			if pending {
				l.LinkedBy = ""
			}
			if err := s.saveLink(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		for _, step := range []struct {
			subject     string
			pending     bool
			wantSubject string
			wantPending bool
		}{
			{"s1", true, "s1", true},
			{"s2", true, "s2", true},
			{"s3", false, "s3", false},
			{"s4", true, "s3", false},
			{"s5", false, "s5", false},
		} {
			save(step.subject, step.pending)
			l, err := s.linkOf(ctx, "ten_a", "usr_a", "https://idp.example.com")
			if err != nil || l == nil || l.Subject != step.wantSubject || l.Pending != step.wantPending {
				t.Errorf("after saving %s (pending %v): %+v %v, want subject %s, pending %v", step.subject, step.pending, l, err, step.wantSubject, step.wantPending)
			}
		}
		if l, err := s.linkOf(ctx, "ten_b", "usr_a", "https://idp.example.com"); l != nil || err != nil {
			t.Errorf("another tenant's link: %+v %v", l, err)
		}
	})
}
