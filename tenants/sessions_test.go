package tenants_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/tenants"
)

const goodPassword = "correct horse battery"

func TestPasswordSignInAndSessions(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		s := tenants.NewStore(db)
		s.SetPasswordCost(bcrypt.MinCost)
		ctx := context.Background()
		a := newFixture(t, s, "alpha")
		b := newFixture(t, s, "bravo")

		for _, tc := range []struct {
			name  string
			pw    string
			field string
		}{
			{name: "too short", pw: "short", field: "password"},
			{name: "too long", pw: strings.Repeat("x", 73), field: "password"},
			{name: "only spaces", pw: strings.Repeat(" ", 12), field: "password"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantCode(t, s.SetPassword(ctx, a.tenant.ID, a.owner.ID, tc.pw), switchboard.CodeInvalid, tc.field)
			})
		}
		// Another tenant's user is not found, and nothing changes.
		wantCode(t, s.SetPassword(ctx, b.tenant.ID, a.owner.ID, goodPassword), switchboard.CodeNotFound, "")
		if _, _, err := s.SignIn(ctx, "alpha", a.owner.Email, goodPassword); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
			t.Fatalf("sign in before any password was set: err = %v, want unauthorized", err)
		}
		if err := s.SetPassword(ctx, a.tenant.ID, a.owner.ID, goodPassword); err != nil {
			t.Fatalf("SetPassword: %v", err)
		}
		var stored string
		if err := db.Raw("SELECT password_hash FROM users WHERE id = ?", a.owner.ID).Scan(&stored).Error; err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(stored, "$2a$04$") || strings.Contains(stored, goodPassword) {
			t.Fatalf("stored password hash %q is not a bcrypt hash", stored)
		}

		refused := []struct {
			name, slug, email, pw string
		}{
			{name: "wrong password", slug: "alpha", email: a.owner.Email, pw: "not the password"},
			{name: "unknown email", slug: "alpha", email: "nobody@alpha.test", pw: goodPassword},
			{name: "other tenant", slug: "bravo", email: a.owner.Email, pw: goodPassword},
			{name: "unknown tenant", slug: "nope", email: a.owner.Email, pw: goodPassword},
			{name: "member without password", slug: "alpha", email: a.member.Email, pw: goodPassword},
		}
		var messages []string
		for _, tc := range refused {
			_, _, err := s.SignIn(ctx, tc.slug, tc.email, tc.pw)
			wantCode(t, err, switchboard.CodeUnauthorized, "")
			messages = append(messages, switchboard.AsError(err).Message)
		}
		for _, m := range messages[1:] {
			if diff := cmp.Diff(messages[0], m); diff != "" {
				t.Errorf("sign-in refusals differ, so they tell which part was wrong (-first +other):\n%s", diff)
			}
		}

		token, ses, err := s.SignIn(ctx, " alpha ", strings.ToUpper(a.owner.Email), goodPassword)
		if err != nil {
			t.Fatalf("SignIn: %v", err)
		}
		if !strings.HasPrefix(token, "sbs_") {
			t.Fatalf("session token %q lacks the sbs_ prefix", token)
		}
		p, err := s.AuthenticateSession(ctx, token)
		if err != nil {
			t.Fatalf("AuthenticateSession: %v", err)
		}
		want := switchboard.Principal{TenantID: a.tenant.ID, TenantSlug: "alpha", Kind: switchboard.PrincipalUser, UserID: a.owner.ID, Role: switchboard.RoleOwner, KeyID: ses.ID}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("principal (-want +got):\n%s", diff)
		}
		// The person who holds a live operator key is the operator in the UI too; once
		// the key is revoked they are not.
		_, opKey, err := s.CreateKey(ctx, a.tenant.ID, a.owner.ID, "operator", true)
		if err != nil {
			t.Fatal(err)
		}
		if p, err := s.AuthenticateSession(ctx, token); err != nil || !p.Operator {
			t.Errorf("with an operator key, the session's principal is %+v, %v; want the operator", p, err)
		}
		if _, err := s.RevokeKey(ctx, a.tenant.ID, opKey.ID); err != nil {
			t.Fatal(err)
		}
		if p, err := s.AuthenticateSession(ctx, token); err != nil || p.Operator {
			t.Errorf("with the operator key revoked, the session's principal is %+v, %v; want no operator", p, err)
		}
		if got := tenants.CSRFToken(token); len(got) != 32 || got == tenants.CSRFToken(token+"x") || strings.Contains(token, got) {
			t.Errorf("CSRFToken = %q: want 32 hex characters, different per session, not part of the token", got)
		}
		for _, bad := range []string{"", "sbs_", token + "x", "sbk_" + token[4:], strings.Repeat("a", 200)} {
			if _, err := s.AuthenticateSession(ctx, bad); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
				t.Errorf("AuthenticateSession(%.12q…): err = %v, want unauthorized", bad, err)
			}
		}

		// Expired sessions are refused.
		expired, _, err := s.SignIn(ctx, "alpha", a.owner.Email, goodPassword)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("UPDATE web_sessions SET expires_at = created_at WHERE token_hash <> ?", "").Error; err != nil {
			t.Fatal(err)
		}
		if _, err := s.AuthenticateSession(ctx, expired); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
			t.Fatalf("expired session: err = %v, want unauthorized", err)
		}

		// Sign out ends exactly that session; a new password ends all of the user's.
		t1, _, err := s.SignIn(ctx, "alpha", a.owner.Email, goodPassword)
		if err != nil {
			t.Fatal(err)
		}
		t2, _, err := s.SignIn(ctx, "alpha", a.owner.Email, goodPassword)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SignOut(ctx, t1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AuthenticateSession(ctx, t1); err == nil {
			t.Fatal("a signed-out session still authenticates")
		}
		if _, err := s.AuthenticateSession(ctx, t2); err != nil {
			t.Fatalf("signing out one session ended another: %v", err)
		}
		if err := s.SetPassword(ctx, a.tenant.ID, a.owner.ID, goodPassword+"!"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AuthenticateSession(ctx, t2); err == nil {
			t.Fatal("a session outlived a password change")
		}
	})
}

func TestInvitationsAndPasswordLinks(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		s := tenants.NewStore(db)
		s.SetPasswordCost(bcrypt.MinCost)
		ctx := context.Background()
		a := newFixture(t, s, "alpha")
		b := newFixture(t, s, "bravo")

		_, _, err := s.CreateInvitation(ctx, a.tenant.ID, "user:"+a.owner.ID, "not an email", switchboard.RoleMember)
		wantCode(t, err, switchboard.CodeInvalid, "email")
		_, _, err = s.CreateInvitation(ctx, a.tenant.ID, "user:"+a.owner.ID, "x@alpha.test", "root")
		wantCode(t, err, switchboard.CodeInvalid, "role")
		_, _, err = s.CreateInvitation(ctx, a.tenant.ID, "user:"+a.owner.ID, a.member.Email, switchboard.RoleMember)
		wantCode(t, err, switchboard.CodeConflict, "email")

		token, inv, err := s.CreateInvitation(ctx, a.tenant.ID, "user:"+a.owner.ID, "New@Alpha.test", switchboard.RoleAdmin)
		if err != nil {
			t.Fatalf("CreateInvitation: %v", err)
		}
		if !strings.HasPrefix(token, "sbi_") {
			t.Fatalf("link token %q lacks the sbi_ prefix", token)
		}
		listA, err := s.ListInvitations(ctx, a.tenant.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(listA) != 1 || listA[0].ID != inv.ID || listA[0].Email != "new@alpha.test" {
			t.Fatalf("alpha's invitations = %+v, want the one just made", listA)
		}
		listB, err := s.ListInvitations(ctx, b.tenant.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(listB) != 0 {
			t.Fatalf("bravo sees alpha's invitations: %+v", listB)
		}
		got, err := s.Link(ctx, token)
		if err != nil {
			t.Fatalf("Link: %v", err)
		}
		if diff := cmp.Diff(tenants.LinkTenant{TenantSlug: "alpha", TenantName: "ALPHA", Email: "new@alpha.test", NewUser: true}, got); diff != "" {
			t.Errorf("Link (-want +got):\n%s", diff)
		}
		// A bad password changes nothing: the link stays usable.
		_, _, _, err = s.UseLink(ctx, token, "short")
		wantCode(t, err, switchboard.CodeInvalid, "password")
		sesToken, _, user, err := s.UseLink(ctx, token, goodPassword)
		if err != nil {
			t.Fatalf("UseLink: %v", err)
		}
		if user.Email != "new@alpha.test" || user.Role != switchboard.RoleAdmin || user.TenantID != a.tenant.ID {
			t.Fatalf("invited user = %+v", user)
		}
		if p, err := s.AuthenticateSession(ctx, sesToken); err != nil || p.UserID != user.ID {
			t.Fatalf("session of the invited user: %+v, %v", p, err)
		}
		if _, _, err := s.SignIn(ctx, "alpha", "new@alpha.test", goodPassword); err != nil {
			t.Fatalf("invited user signs in: %v", err)
		}
		// Links are single use.
		_, _, _, err = s.UseLink(ctx, token, goodPassword)
		wantCode(t, err, switchboard.CodeNotFound, "")
		if _, err := s.Link(ctx, token); switchboard.CodeOf(err) != switchboard.CodeNotFound {
			t.Fatalf("used link: err = %v, want not_found", err)
		}

		// A password link sets an existing user's password; another tenant's user is not found.
		_, _, err = s.PasswordLink(ctx, b.tenant.ID, a.member.ID, "operator")
		wantCode(t, err, switchboard.CodeNotFound, "")
		pwToken, _, err := s.PasswordLinkByEmail(ctx, "alpha", a.member.Email, "operator")
		if err != nil {
			t.Fatalf("PasswordLinkByEmail: %v", err)
		}
		if got, err := s.Link(ctx, pwToken); err != nil || got.NewUser || got.Email != a.member.Email {
			t.Fatalf("password link: %+v, %v", got, err)
		}
		_, _, err = s.PasswordLinkByEmail(ctx, "bravo", a.member.Email, "operator")
		wantCode(t, err, switchboard.CodeNotFound, "")
		if _, _, u, err := s.UseLink(ctx, pwToken, goodPassword); err != nil || u.ID != a.member.ID {
			t.Fatalf("UseLink(password link) = %+v, %v", u, err)
		}
		if _, _, err := s.SignIn(ctx, "alpha", a.member.Email, goodPassword); err != nil {
			t.Fatalf("member signs in with the password the link set: %v", err)
		}

		// Expired links are refused.
		late, _, err := s.CreateInvitation(ctx, a.tenant.ID, "user:"+a.owner.ID, "late@alpha.test", switchboard.RoleMember)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("UPDATE invitations SET expires_at = created_at WHERE used_at IS NULL").Error; err != nil {
			t.Fatal(err)
		}
		_, _, _, err = s.UseLink(ctx, late, goodPassword)
		wantCode(t, err, switchboard.CodeNotFound, "")
	})
}

// TestPasswordCostAndSessionCleanup checks the bcrypt cost of new hashes (the default,
// and a bad value falling back to it), that a hash of any cost verifies, and that a new
// session removes the user's expired ones.
func TestPasswordCostAndSessionCleanup(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		fast := tenants.NewStore(db)
		fast.SetPasswordCost(bcrypt.MinCost)
		a := newFixture(t, fast, "alpha")
		if err := fast.SetPassword(ctx, a.tenant.ID, a.owner.ID, goodPassword); err != nil {
			t.Fatal(err)
		}
		standard := tenants.NewStore(db)
		standard.SetPasswordCost(99) // out of range: the default
		if _, _, err := standard.SignIn(ctx, "alpha", a.owner.Email, goodPassword); err != nil {
			t.Fatalf("a cost-4 hash does not verify in a default-cost store: %v", err)
		}
		if err := standard.SetPassword(ctx, a.tenant.ID, a.member.ID, goodPassword); err != nil {
			t.Fatal(err)
		}
		var stored string
		if err := db.Raw("SELECT password_hash FROM users WHERE id = ?", a.member.ID).Scan(&stored).Error; err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(stored, "$2a$11$") {
			t.Fatalf("hash %.7s…, want cost 11 ($2a$11$)", stored)
		}

		if _, _, err := fast.SignIn(ctx, "alpha", a.owner.Email, goodPassword); err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("UPDATE web_sessions SET expires_at = created_at WHERE user_id = ?", a.owner.ID).Error; err != nil {
			t.Fatal(err)
		}
		if _, _, err := fast.SignIn(ctx, "alpha", a.owner.Email, goodPassword); err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := db.Table("web_sessions").Where("user_id = ?", a.owner.ID).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("the owner has %d sessions after the expired ones were due for removal, want 1", n)
		}
	})
}
