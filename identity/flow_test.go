package identity

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/internal/feedtest"
)

// TestServerMetadata checks the RFC 8414 document: the endpoints under the public URL,
// S256 as the only PKCE method, and the one scope.
func TestServerMetadata(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	res, err := http.Get(r.base + ServerMetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	status, doc := decodeJSON(t, res)
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	want := map[string]any{
		"issuer": r.base, "authorization_endpoint": r.base + "/oauth/authorize", "token_endpoint": r.base + "/oauth/token",
		"registration_endpoint": r.base + "/oauth/register", "revocation_endpoint": r.base + "/oauth/revoke",
		"revocation_endpoint_auth_methods_supported": []any{"none", "client_secret_post", "client_secret_basic"}, "scopes_supported": []any{"mcp"}, "response_types_supported": []any{"code"},
		"response_modes_supported": []any{"query"}, "grant_types_supported": []any{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported": []any{"none", "client_secret_post", "client_secret_basic"},
		"code_challenge_methods_supported":      []any{"S256"}, "authorization_response_iss_parameter_supported": true,
		"client_id_metadata_document_supported": true,
	}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
}

// TestAuthorizationCodeFlow runs the whole flow for the tenant URL: the consent
// redirect carries code, state and iss; the access token stands for the person at
// that URL only; refreshing rotates the refresh token.
func TestAuthorizationCodeFlow(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	resource := ResourceURL(r.base, "acme", "")
	clientID, resp := r.tokens(r.signIn(r.acme, r.ada), resource)
	if resp["token_type"] != "Bearer" || resp["scope"] != "mcp" || resp["expires_in"] != float64(3600) {
		t.Errorf("token response %v", resp)
	}
	at := resp["access_token"].(string)
	if !LooksLikeAccessToken(at) {
		t.Fatalf("access token %q does not look like one", at)
	}
	p, err := r.srv.AuthenticateToken(ctx, at, resource)
	if err != nil {
		t.Fatal(err)
	}
	var g Grant
	if err := r.db.Where("tenant_id = ?", r.acme.ID).Take(&g).Error; err != nil {
		t.Fatal(err)
	}
	want := switchboard.Principal{TenantID: r.acme.ID, TenantSlug: "acme", Kind: switchboard.PrincipalUser, UserID: r.ada.ID, Role: switchboard.RoleOwner, KeyID: g.ID}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("principal (-want +got):\n%s", diff)
	}
	if g.ClientID != clientID || g.ClientName != "Test client" || g.Resource != resource || g.ConsentedBy != r.ada.ID {
		t.Errorf("grant %+v", g)
	}
	// The refresh token is used once, and replaced.
	rt := resp["refresh_token"].(string)
	status, next := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {clientID}, "resource": {resource}})
	if status != http.StatusOK || next["refresh_token"] == rt || next["refresh_token"] == "" {
		t.Fatalf("refresh: %d %v", status, next)
	}
	if _, err := r.srv.AuthenticateToken(ctx, next["access_token"].(string), resource); err != nil {
		t.Errorf("refreshed access token refused: %v", err)
	}
	// Only hashes are stored.
	var n int64
	r.db.Table("oauth_refresh_tokens").Where("hash = ? OR hash = ?", rt, next["refresh_token"]).Count(&n)
	if n != 0 {
		t.Error("a refresh token is stored in the clear")
	}
}

// TestAgentGrant checks that a grant for an agent URL acts as that agent (for its
// creator) and only there.
func TestAgentGrant(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	resource := ResourceURL(r.base, "acme", "agt_a")
	_, resp := r.tokens(r.signIn(r.acme, r.ada), resource)
	p, err := r.srv.AuthenticateToken(ctx, resp["access_token"].(string), resource)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != switchboard.PrincipalAgent || p.AgentID != "agt_a" || p.UserID != r.ada.ID || p.TenantSlug != "acme" {
		t.Errorf("principal %+v", p)
	}
	if _, err := r.srv.AuthenticateToken(ctx, resp["access_token"].(string), ResourceURL(r.base, "acme", "")); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
		t.Errorf("the agent's token at the tenant URL: %v, want unauthorized", err)
	}
	// A person who may not hand out the agent gets no consent page for it.
	clientID := r.publicClient("http://127.0.0.1:4567/callback")
	_, challenge := pkce()
	res := r.get(r.authParams(clientID, "http://127.0.0.1:4567/callback", challenge, ResourceURL(r.base, "acme", "agt_other")), r.signIn(r.acme, r.ada))
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("consent for another's agent: %d, want 403", res.StatusCode)
	}
}

// TestRevokedGrantRefusedEverywhere checks that revoking a grant refuses its access
// token at once, tells the hooks (open MCP requests end), and publishes the revocation
// for the other nodes; and that another node's revocation does the same here.
func TestRevokedGrantRefusedEverywhere(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	feed := feedtest.New()
	r.srv.SetFeed(feed)
	var heard [][]string
	r.srv.OnGrantsRevoked(func(tenant switchboard.TenantID, ids []string) {
		heard = append(heard, append([]string{string(tenant)}, ids...))
	})
	resource := ResourceURL(r.base, "acme", "")
	session := r.signIn(r.acme, r.ada)
	_, first := r.tokens(session, resource)
	_, second := r.tokens(session, resource)
	var grants []Grant
	r.db.Where("tenant_id = ?", r.acme.ID).Order("created_at").Find(&grants)
	if len(grants) != 2 {
		t.Fatalf("%d grants, want 2", len(grants))
	}
	// Both verified once, so both are cached.
	for _, resp := range []map[string]any{first, second} {
		if _, err := r.srv.AuthenticateToken(ctx, resp["access_token"].(string), resource); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.srv.revokeGrant(ctx, r.acme.ID, grants[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.srv.AuthenticateToken(ctx, first["access_token"].(string), resource); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
		t.Errorf("revoked grant's token: %v, want unauthorized", err)
	}
	pub := feed.Published()
	if len(pub) != 1 || pub[0].Kind != grantRevokedKind || pub[0].ID != grants[0].ID || pub[0].Tenant != r.acme.ID {
		t.Errorf("published %+v", pub)
	}
	// Another node revokes the second grant: its row is revoked there, the event arrives here.
	r.db.Model(&Grant{}).Where("id = ?", grants[1].ID).Update("revoked_at", r.srv.now())
	feed.Deliver(events.Event{Kind: grantRevokedKind, Tenant: r.acme.ID, ID: grants[1].ID})
	if _, err := r.srv.AuthenticateToken(ctx, second["access_token"].(string), resource); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
		t.Errorf("grant revoked on another node: %v, want unauthorized", err)
	}
	want := [][]string{{string(r.acme.ID), grants[0].ID}, {string(r.acme.ID), grants[1].ID}}
	if diff := cmp.Diff(want, heard); diff != "" {
		t.Errorf("hooks heard (-want +got):\n%s", diff)
	}
	// The refresh token of a revoked grant is refused too.
	status, body := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first["refresh_token"].(string)}, "client_id": {grants[0].ClientID}})
	if status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("refresh of a revoked grant: %d %v", status, body)
	}
}

// TestNotSignedInGoesToSignIn checks that the authorization request comes back after
// the sign-in page.
func TestNotSignedInGoesToSignIn(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	redirect := "http://127.0.0.1:4567/callback"
	clientID := r.publicClient(redirect)
	_, challenge := pkce()
	q := r.authParams(clientID, redirect, challenge, ResourceURL(r.base, "acme", ""))
	res := r.get(q, "")
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || loc.Path != "/signin" || loc.Query().Get("next") != AuthorizePath+"?"+q.Encode() {
		t.Errorf("status %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestConsentAnswers checks the consent page's other answers: deny goes back with
// access_denied; a form without the session's anti-forgery token, or with no session,
// is refused without a code; a person signed in to another workspace is told so.
func TestConsentAnswers(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	redirect := "http://127.0.0.1:4567/callback"
	clientID := r.publicClient(redirect)
	_, challenge := pkce()
	q := r.authParams(clientID, redirect, challenge, ResourceURL(r.base, "acme", ""))
	session := r.signIn(r.acme, r.ada)
	form := func(csrf, decision string) url.Values {
		f := url.Values{}
		for k, v := range q {
			f[k] = v
		}
		f.Set("csrf", csrf)
		f.Set("decision", decision)
		return f
	}
	back := r.redirected(r.post(form(r.sess.CSRFToken(session), "deny"), session))
	if back.Get("error") != "access_denied" || back.Get("code") != "" || back.Get("state") != "st-1" || back.Get("iss") != r.base {
		t.Errorf("deny: %v", back)
	}
	for name, tc := range map[string]struct{ csrf, session string }{
		"no anti-forgery token":   {"", session},
		"another session's token": {r.sess.CSRFToken("other"), session},
		"no session":              {r.sess.CSRFToken(session), ""},
	} {
		res := r.post(form(tc.csrf, "allow"), tc.session)
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden || res.Header.Get("Location") != "" {
			t.Errorf("%s: status %d, Location %q; want 403 and no redirect", name, res.StatusCode, res.Header.Get("Location"))
		}
	}
	var codes int64
	r.db.Table("oauth_codes").Count(&codes)
	if codes != 0 {
		t.Errorf("%d codes issued, want none", codes)
	}
	res := r.get(q, r.signIn(r.beta, r.bob))
	body := readAll(t, res)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "you are signed in to workspace <strong>beta</strong>") {
		t.Errorf("signed in to another workspace: %d %s", res.StatusCode, body)
	}
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, res.Body); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestAgentChoiceAtWorkspaceURL checks the consent page's choice at the workspace URL:
// it offers the agents the person may hand out, and a client given one acts as that
// agent at that URL only; an agent the person may not hand out is refused.
func TestAgentChoiceAtWorkspaceURL(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	redirect := "http://127.0.0.1:4567/callback"
	clientID := r.publicClient(redirect)
	verifier, challenge := pkce()
	resource := ResourceURL(r.base, "acme", "")
	session := r.signIn(r.acme, r.ada)
	q := r.authParams(clientID, redirect, challenge, resource)
	res := r.get(q, session)
	page := readAll(t, res)
	if !strings.Contains(page, `name="act_as" value="agt_a"`) || !strings.Contains(page, "The tools of the agent Triage") {
		t.Fatalf("the consent page offers no agent: %s", page)
	}
	form := url.Values{}
	for k, v := range q {
		form[k] = v
	}
	form.Set("csrf", r.sess.CSRFToken(session))
	form.Set("decision", "allow")
	form.Set("act_as", "agt_other")
	refused := r.post(form, session)
	refused.Body.Close()
	if refused.StatusCode != http.StatusForbidden || refused.Header.Get("Location") != "" {
		t.Errorf("an agent the person may not hand out: %d %q", refused.StatusCode, refused.Header.Get("Location"))
	}
	form.Set("act_as", "agt_a")
	code := r.redirected(r.post(form, session)).Get("code")
	status, body := r.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "client_id": {clientID}, "code_verifier": {verifier}})
	if status != http.StatusOK {
		t.Fatalf("token: %d %v", status, body)
	}
	p, err := r.srv.AuthenticateToken(ctx, body["access_token"].(string), resource)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != switchboard.PrincipalAgent || p.AgentID != "agt_a" || p.UserID != r.ada.ID {
		t.Errorf("principal %+v, want agent agt_a acting for its creator", p)
	}
	if _, err := r.srv.AuthenticateToken(ctx, body["access_token"].(string), ResourceURL(r.base, "acme", "agt_a")); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
		t.Errorf("at the agent's own URL: %v, want unauthorized (the token is for the workspace URL)", err)
	}
}
