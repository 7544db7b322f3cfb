package identity

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
)

// TestRevocationEndpoint checks RFC 7009: a client revokes its grant with its refresh
// token or its access token; another client's revocation of them, and unknown tokens,
// get 200 and change nothing.
func TestRevocationEndpoint(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	resource := ResourceURL(r.base, "acme", "")
	revoke := func(form url.Values) int {
		res, err := http.PostForm(r.base+RevocationPath, form)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	live := func(resp map[string]any) bool {
		_, err := r.srv.AuthenticateToken(ctx, resp["access_token"].(string), resource)
		return err == nil
	}
	session := r.signIn(r.acme, r.ada)
	byRefresh, viaRefresh := r.tokens(session, resource)
	byAccess, viaAccess := r.tokens(session, resource)
	other := r.publicClient("http://127.0.0.1:9999/cb")
	for name, form := range map[string]url.Values{
		"another client's refresh token": {"token": {viaRefresh["refresh_token"].(string)}, "client_id": {other}},
		"another client's access token":  {"token": {viaAccess["access_token"].(string)}, "client_id": {other}, "token_type_hint": {"access_token"}},
		"an unknown refresh token":       {"token": {"sbr_nothing"}, "client_id": {byRefresh}},
		"garbage":                        {"token": {"x.y.z"}, "client_id": {byRefresh}},
	} {
		if status := revoke(form); status != http.StatusOK {
			t.Errorf("%s: %d, want 200", name, status)
		}
	}
	if !live(viaRefresh) || !live(viaAccess) {
		t.Fatal("a revocation by another client, or of an unknown token, revoked a grant")
	}
	if status := revoke(url.Values{"token": {viaRefresh["refresh_token"].(string)}, "client_id": {byRefresh}}); status != http.StatusOK {
		t.Errorf("revoke by refresh token: %d", status)
	}
	if status := revoke(url.Values{"token": {viaAccess["access_token"].(string)}, "client_id": {byAccess}}); status != http.StatusOK {
		t.Errorf("revoke by access token: %d", status)
	}
	if live(viaRefresh) || live(viaAccess) {
		t.Error("a revoked grant's access token still works")
	}
	if status := revoke(url.Values{"token": {"sbr_x"}}); status != http.StatusUnauthorized {
		t.Errorf("no client: %d, want 401", status)
	}
}

// TestConnectedApps checks who sees and revokes which grants: a member their own, an
// admin every grant of the tenant, nobody another tenant's, and an agent's key none.
func TestConnectedApps(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	member, err := r.store.CreateUser(ctx, r.acme.ID, "mia@example.com", switchboard.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	resource := ResourceURL(r.base, "acme", "")
	_, adas := r.tokens(r.signIn(r.acme, r.ada), resource)
	_, mias := r.tokens(r.signIn(r.acme, member), resource)
	_, _ = r.tokens(r.signIn(r.beta, r.bob), ResourceURL(r.base, "beta", ""))
	pAda := switchboard.Principal{TenantID: r.acme.ID, TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: r.ada.ID, Role: switchboard.RoleOwner}
	pMia := switchboard.Principal{TenantID: r.acme.ID, TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: member.ID, Role: switchboard.RoleMember}
	ids := func(p switchboard.Principal) []string {
		gs, err := r.srv.ListGrants(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, g := range gs {
			out = append(out, g.ConsentedBy)
		}
		return out
	}
	if diff := cmp.Diff([]string{member.ID, r.ada.ID}, ids(pAda)); diff != "" {
		t.Errorf("admin's list (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{member.ID}, ids(pMia)); diff != "" {
		t.Errorf("member's list (-want +got):\n%s", diff)
	}
	agent := pMia
	agent.Kind, agent.AgentID = switchboard.PrincipalAgent, "agt_a"
	if _, err := r.srv.ListGrants(ctx, agent); switchboard.CodeOf(err) != switchboard.CodeForbidden {
		t.Errorf("agent key lists: %v, want forbidden", err)
	}
	adaGrants, _ := r.srv.ListGrants(ctx, pAda)
	var adaGrant, miaGrant string
	for _, g := range adaGrants {
		if g.ConsentedBy == r.ada.ID {
			adaGrant = g.ID
		} else {
			miaGrant = g.ID
		}
	}
	if _, err := r.srv.RevokeGrant(ctx, pMia, adaGrant); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("member revokes the admin's: %v, want not found", err)
	}
	var betaGrant Grant
	r.db.Where("tenant_id = ?", r.beta.ID).Take(&betaGrant)
	if _, err := r.srv.RevokeGrant(ctx, pAda, betaGrant.ID); switchboard.CodeOf(err) != switchboard.CodeNotFound {
		t.Errorf("admin revokes another tenant's: %v, want not found", err)
	}
	if _, err := r.srv.AuthenticateToken(ctx, adas["access_token"].(string), resource); err != nil {
		t.Fatalf("a refused revocation revoked: %v", err)
	}
	g, err := r.srv.RevokeGrant(ctx, pAda, miaGrant)
	if err != nil || g.RevokedAt == nil {
		t.Fatalf("admin revokes the member's: %+v %v", g, err)
	}
	if _, err := r.srv.AuthenticateToken(ctx, mias["access_token"].(string), resource); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
		t.Errorf("revoked grant's token: %v, want unauthorized", err)
	}
	if diff := cmp.Diff([]string(nil), ids(pMia)); diff != "" {
		t.Errorf("member's list after the revocation (-want +got):\n%s", diff)
	}
}
