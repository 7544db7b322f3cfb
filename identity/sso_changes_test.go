package identity

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/internal/oauthtest"
)

// TestSSOOwnersOnly: whoever sets the identity provider decides who signs in as whom,
// so an admin, a member and an agent's key (even the owner's agent) may not read,
// set or remove single sign-on, nor see or acknowledge its changes, nor list or
// approve links; each refusal says an owner manages it, and changes nothing.
func TestSSOOwnersOnly(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com"}})
	ctx := context.Background()
	dan := r.addUser(t, "dan@example.com", switchboard.RoleAdmin)
	changes, err := r.srv.SSOChanges(ctx, r.admin())
	if err != nil || len(changes) != 1 {
		t.Fatalf("the owner's changes: %+v %v", changes, err)
	}
	before, _ := r.srv.SSO(ctx, r.admin())
	// An identity provider an attacker runs, which answers discovery.
	attacker := oauthtest.NewOIDC(t, oauthtest.OIDCOptions{ClientID: "attacker", ClientSecret: "attacker-secret", RedirectURI: r.base + SSOCallbackPath}).Issuer()
	for _, tc := range []struct {
		name string
		p    switchboard.Principal
	}{
		{"admin", switchboard.Principal{TenantID: r.acme.ID, TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: dan.ID, Role: switchboard.RoleAdmin, KeyID: "key_dan"}},
		{"member", switchboard.Principal{TenantID: r.acme.ID, TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: "usr_m", Role: switchboard.RoleMember}},
		{"owner's agent", switchboard.Principal{TenantID: r.acme.ID, TenantSlug: "acme", Kind: switchboard.PrincipalAgent, AgentID: "agt_a", UserID: r.ada.ID, Role: switchboard.RoleOwner}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := map[string]error{}
			_, calls["read"] = r.srv.SSO(ctx, tc.p)
			_, calls["set"] = r.srv.SetSSO(ctx, tc.p, SSOInput{Issuer: attacker, ClientID: "attacker", ClientSecret: "attacker-secret"})
			calls["remove"] = r.srv.DeleteSSO(ctx, tc.p)
			_, calls["list changes"] = r.srv.SSOChanges(ctx, tc.p)
			calls["acknowledge"] = r.srv.AcknowledgeSSOChange(ctx, tc.p, changes[0].ID)
			_, calls["list links"] = r.srv.SSOLinks(ctx, tc.p)
			_, calls["approve"] = r.srv.ApproveSSOLink(ctx, tc.p, "ssk_x")
			for call, err := range calls {
				if e := switchboard.AsError(err); e.Code != switchboard.CodeForbidden || !strings.Contains(e.Message, "owner") {
					t.Errorf("%s: %v, want forbidden naming the owner", call, err)
				}
			}
		})
	}
	after, err := r.srv.SSO(ctx, r.admin())
	if err != nil || after.Issuer != before.Issuer || !after.UpdatedAt.Equal(*before.UpdatedAt) {
		t.Errorf("single sign-on after the refusals: %+v %v", after, err)
	}
	if left, _ := r.srv.SSOChanges(ctx, r.admin()); len(left) != 1 {
		t.Errorf("the owner's changes after the refusals: %+v", left)
	}
}

// TestSSOChangesShownToEachOwner: each change of single sign-on is shown to every
// owner, the one who made it included, saying who changed what (never the client
// secret), until that owner acknowledges it: one owner's acknowledgement does not
// hide it from another. The notices are kept in the database: a restarted server
// shows the same. Each change is audited too.
func TestSSOChangesShownToEachOwner(t *testing.T) {
	t.Parallel()
	r := newSSORig(t, SSOInput{AllowedDomains: []string{"example.com"}})
	ctx := context.Background()
	oz := r.addUser(t, "oz@example.com", switchboard.RoleOwner)
	ozP := switchboard.Principal{TenantID: r.acme.ID, TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: oz.ID, Role: oz.Role}
	if _, err := r.srv.SetSSO(ctx, r.admin(), SSOInput{Issuer: r.op.Issuer(), ClientID: "switchboard-acme", ClientSecret: "a-new-secret-0123456789",
		AllowedDomains: []string{"example.com", "partner.net"}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []switchboard.Principal{r.admin(), ozP} {
		changes, err := r.srv.SSOChanges(ctx, p)
		if err != nil || len(changes) != 2 {
			t.Fatalf("%s's changes: %+v %v, want the set-up and the change", p.UserID, changes, err)
		}
		latest := changes[0]
		if latest.ChangedBy != "user:"+r.ada.ID || latest.Email != "ada@example.com" || !strings.Contains(latest.Detail, `domains "example.com" → "example.com partner.net"`) ||
			!strings.Contains(latest.Detail, "new client secret") || strings.Contains(latest.Detail, "a-new-secret") {
			t.Errorf("%s's latest change: %+v", p.UserID, latest)
		}
		if !strings.Contains(changes[1].Detail, "single sign-on set up: issuer "+r.op.Issuer()) || strings.Contains(changes[1].Detail, ssoSecret) {
			t.Errorf("%s's first change: %+v", p.UserID, changes[1])
		}
	}
	set := r.audit.of(audit.KindSSOSet)
	if len(set) != 2 || set[1].Principal != "user:"+r.ada.ID || !strings.Contains(set[1].Detail, "partner.net") || strings.Contains(set[1].Detail, "a-new-secret") {
		t.Errorf("sso_set events: %+v", set)
	}

	adaChanges, _ := r.srv.SSOChanges(ctx, r.admin())
	for _, c := range adaChanges {
		if err := r.srv.AcknowledgeSSOChange(ctx, r.admin(), c.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.srv.AcknowledgeSSOChange(ctx, r.admin(), adaChanges[0].ID); err != nil {
		t.Errorf("acknowledge twice: %v", err)
	}
	if left, _ := r.srv.SSOChanges(ctx, r.admin()); len(left) != 0 {
		t.Errorf("ada's changes after acknowledging them: %+v", left)
	}
	if err := r.srv.AcknowledgeSSOChange(ctx, ozP, adaChanges[1].ID); err != nil {
		t.Fatal(err)
	}
	bob := switchboard.Principal{TenantID: r.beta.ID, TenantSlug: "beta", Kind: switchboard.PrincipalUser, UserID: r.bob.ID, Role: switchboard.RoleOwner}
	if err := r.srv.AcknowledgeSSOChange(ctx, bob, adaChanges[0].ID); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("another tenant's owner acknowledges acme's change: %v, want not found", err)
	}

	restarted := New(Options{DB: r.db, Keyring: r.kr, PublicURL: r.base, Logger: slog.New(slog.DiscardHandler), Accounts: r.store})
	left, err := restarted.SSOChanges(ctx, ozP)
	if err != nil || len(left) != 1 || left[0].ID != adaChanges[0].ID {
		t.Errorf("oz's changes after acknowledging one, on a restarted server: %+v %v, want the latest still shown", left, err)
	}
	if err := restarted.DeleteSSO(ctx, r.admin()); err != nil {
		t.Fatal(err)
	}
	if got, _ := restarted.SSOChanges(ctx, r.admin()); len(got) != 1 || !strings.Contains(got[0].Detail, "single sign-on removed") {
		t.Errorf("ada's changes after the removal: %+v", got)
	}
}
