package identity

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/switchboard-hub/switchboard"
)

// TestPKCEOnlyS256 checks that an authorization request without PKCE, or with plain
// PKCE, goes back to the client with invalid_request and no code.
func TestPKCEOnlyS256(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	redirect := "http://127.0.0.1:4567/callback"
	clientID := r.publicClient(redirect)
	verifier, challenge := pkce()
	session := r.signIn(r.acme, r.ada)
	for name, change := range map[string]func(url.Values){
		"plain":                 func(q url.Values) { q.Set("code_challenge_method", "plain"); q.Set("code_challenge", verifier) },
		"no method means plain": func(q url.Values) { q.Del("code_challenge_method") },
		"no challenge":          func(q url.Values) { q.Del("code_challenge") },
		"challenge too short":   func(q url.Values) { q.Set("code_challenge", "abc") },
	} {
		q := r.authParams(clientID, redirect, challenge, ResourceURL(r.base, "acme", ""))
		change(q)
		back := r.redirected(r.get(q, session))
		if back.Get("error") != "invalid_request" || back.Get("code") != "" {
			t.Errorf("%s: %v, want invalid_request and no code", name, back)
		}
	}
	// And a code exchanged with the wrong verifier, or none, gives nothing.
	q := r.authParams(clientID, redirect, challenge, ResourceURL(r.base, "acme", ""))
	code := r.consent(q, session).Get("code")
	for name, v := range map[string]string{"wrong verifier": strings.Repeat("a", 43), "the challenge itself": challenge, "none": ""} {
		status, body := r.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "client_id": {clientID}, "code_verifier": {v}})
		if status != http.StatusBadRequest || (body["error"] != "invalid_grant" && body["error"] != "invalid_request") {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}
}

// TestResourceBinding checks RFC 8707: an authorization request for anything but one
// of this server's MCP URLs is refused with invalid_target, and a token request naming
// another resource than the consented one too.
func TestResourceBinding(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	redirect := "http://127.0.0.1:4567/callback"
	clientID := r.publicClient(redirect)
	verifier, challenge := pkce()
	session := r.signIn(r.acme, r.ada)
	for _, res := range []string{"", "https://evil.example/mcp/acme", r.base + "/mcp/acme/", r.base + "/mcp/acme/tools", r.base + "/api/keys", r.base + "/mcp/ACME", r.base + "/mcp/acme?x=1"} {
		back := r.redirected(r.get(r.authParams(clientID, redirect, challenge, res), session))
		if back.Get("error") != "invalid_target" {
			t.Errorf("resource %q: %v, want invalid_target", res, back)
		}
	}
	q := r.authParams(clientID, redirect, challenge, ResourceURL(r.base, "acme", ""))
	q.Add("resource", ResourceURL(r.base, "beta", ""))
	res := r.get(q, session)
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" {
		t.Errorf("two resources: %d %q, want a 400 page", res.StatusCode, res.Header.Get("Location"))
	}
	code := r.consent(r.authParams(clientID, redirect, challenge, ResourceURL(r.base, "acme", "")), session).Get("code")
	status, body := r.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "client_id": {clientID},
		"code_verifier": {verifier}, "resource": {ResourceURL(r.base, "beta", "")}})
	if status != http.StatusBadRequest || body["error"] != "invalid_target" {
		t.Errorf("token for another resource: %d %v", status, body)
	}
}

// TestCodeReplay checks that a code works once, and that its second use revokes what
// the first gave.
func TestCodeReplay(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	redirect := "http://127.0.0.1:4567/callback"
	clientID := r.publicClient(redirect)
	verifier, challenge := pkce()
	resource := ResourceURL(r.base, "acme", "")
	code := r.consent(r.authParams(clientID, redirect, challenge, resource), r.signIn(r.acme, r.ada)).Get("code")
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "client_id": {clientID}, "code_verifier": {verifier}}
	status, first := r.token(form)
	if status != http.StatusOK {
		t.Fatalf("first exchange: %d %v", status, first)
	}
	status, again := r.token(form)
	if status != http.StatusBadRequest || again["error"] != "invalid_grant" {
		t.Errorf("replay: %d %v", status, again)
	}
	if _, err := r.srv.AuthenticateToken(context.Background(), first["access_token"].(string), resource); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
		t.Errorf("access token of a replayed code: %v, want unauthorized", err)
	}
	status, body := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first["refresh_token"].(string)}, "client_id": {clientID}})
	if status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("refresh token of a replayed code: %d %v", status, body)
	}
	// An expired code is refused as well.
	code = r.consent(r.authParams(clientID, redirect, challenge, resource), r.signIn(r.acme, r.ada)).Get("code")
	r.db.Table("oauth_codes").Where("hash = ?", hashSecret(code)).Update("expires_at", time.Now().Add(-time.Second))
	form.Set("code", code)
	if status, body := r.token(form); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("expired code: %d %v", status, body)
	}
}

// TestRefreshReuse checks rotation: a refresh token used a second time revokes the
// grant, so the thief's and the client's tokens both stop working.
func TestRefreshReuse(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	resource := ResourceURL(r.base, "acme", "")
	clientID, resp := r.tokens(r.signIn(r.acme, r.ada), resource)
	old := resp["refresh_token"].(string)
	status, next := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {old}, "client_id": {clientID}})
	if status != http.StatusOK {
		t.Fatalf("refresh: %d %v", status, next)
	}
	status, body := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {old}, "client_id": {clientID}})
	if status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("reuse: %d %v", status, body)
	}
	if _, err := r.srv.AuthenticateToken(context.Background(), next["access_token"].(string), resource); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
		t.Errorf("access token after reuse: %v, want unauthorized", err)
	}
	status, body = r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {next["refresh_token"].(string)}, "client_id": {clientID}})
	if status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("newest refresh token after reuse: %d %v", status, body)
	}
	// Another client cannot use a client's refresh token.
	other := r.publicClient("http://127.0.0.1:9999/cb")
	_, fresh := r.tokens(r.signIn(r.acme, r.ada), resource)
	status, body = r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {fresh["refresh_token"].(string)}, "client_id": {other}})
	if status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("another client's refresh token: %d %v", status, body)
	}
}

// TestCrossTenantTokenRefused checks that a token is accepted only at its MCP URL: not
// at another tenant's, not at an agent's; that a token claiming another tenant does
// not verify; and that forged, unsigned and expired tokens are refused.
func TestCrossTenantTokenRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	acmeURL := ResourceURL(r.base, "acme", "")
	_, resp := r.tokens(r.signIn(r.acme, r.ada), acmeURL)
	at := resp["access_token"].(string)
	for _, res := range []string{ResourceURL(r.base, "beta", ""), ResourceURL(r.base, "acme", "agt_a"), "https://other.example/mcp/acme"} {
		if _, err := r.srv.AuthenticateToken(ctx, at, res); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
			t.Errorf("at %s: %v, want unauthorized", res, err)
		}
	}
	// beta's own token works at beta, so beta has a key; acme's key signs a token that
	// claims beta: it must not verify with beta's key.
	betaURL := ResourceURL(r.base, "beta", "")
	_, betaResp := r.tokens(r.signIn(r.beta, r.bob), betaURL)
	if _, err := r.srv.AuthenticateToken(ctx, betaResp["access_token"].(string), betaURL); err != nil {
		t.Fatal(err)
	}
	acmeKey, err := r.srv.keys.current(ctx, r.acme.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var betaGrant Grant
	r.db.Where("tenant_id = ?", r.beta.ID).Take(&betaGrant)
	forge := func(key any, kid string, c accessClaims, typ string) string {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType(jose.ContentType(typ)).WithHeader("kid", kid))
		if err != nil {
			t.Fatal(err)
		}
		s, err := jwt.Signed(signer).Claims(c).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	now := time.Now()
	claims := func(tenant switchboard.TenantID, grant, aud string, exp time.Time) accessClaims {
		return accessClaims{Claims: jwt.Claims{Issuer: r.base, Audience: jwt.Audience{aud}, Expiry: jwt.NewNumericDate(exp), IssuedAt: jwt.NewNumericDate(now)},
			Tenant: tenant, Grant: grant}
	}
	betaKid := func() string {
		var k signingKey
		r.db.Where("tenant_id = ?", r.beta.ID).Take(&k)
		return k.ID
	}()
	for name, tok := range map[string]string{
		"acme's key, beta's claims and key id": forge(acmeKey.key, betaKid, claims(r.beta.ID, betaGrant.ID, betaURL, now.Add(time.Hour)), accessTokenType),
		"acme's key, beta's claims":            forge(acmeKey.key, acmeKey.kid, claims(r.beta.ID, betaGrant.ID, betaURL, now.Add(time.Hour)), accessTokenType),
		"expired":                              forge(acmeKey.key, acmeKey.kid, claims(r.acme.ID, "grt_x", acmeURL, now.Add(-time.Hour)), accessTokenType),
		"not an access token":                  forge(acmeKey.key, acmeKey.kid, claims(r.acme.ID, "grt_x", acmeURL, now.Add(time.Hour)), "JWT"),
		"unsigned":                             "eyJhbGciOiJub25lIiwidHlwIjoiYXQrand0In0." + strings.Split(at, ".")[1] + ".",
		"garbage":                              "a.b.c",
	} {
		res := betaURL
		if strings.Contains(name, "expired") || strings.Contains(name, "not an") || name == "unsigned" || name == "garbage" {
			res = acmeURL
		}
		if _, err := r.srv.AuthenticateToken(ctx, tok, res); switchboard.CodeOf(err) != switchboard.CodeUnauthorized {
			t.Errorf("%s: %v, want unauthorized", name, err)
		}
	}
}

// TestRedirectURIExactMatch checks that the redirect URI must be exactly a registered
// one, and that a mismatch (or an unknown client) is shown to the person rather than
// redirected anywhere: no open redirect.
func TestRedirectURIExactMatch(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	redirect := "http://127.0.0.1:4567/callback"
	clientID := r.publicClient(redirect)
	_, challenge := pkce()
	session := r.signIn(r.acme, r.ada)
	for _, uri := range []string{"", "http://127.0.0.1:4567/callback/", "http://127.0.0.1:4568/callback", "http://127.0.0.1:4567/callback?x=1",
		"http://localhost:4567/callback", "https://evil.example/callback", "HTTP://127.0.0.1:4567/callback"} {
		res := r.get(r.authParams(clientID, uri, challenge, ResourceURL(r.base, "acme", "")), session)
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" {
			t.Errorf("redirect_uri %q: %d, Location %q; want a 400 page", uri, res.StatusCode, res.Header.Get("Location"))
		}
	}
	res := r.get(r.authParams("cli_unknown", "https://evil.example/cb", challenge, ResourceURL(r.base, "acme", "")), session)
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" {
		t.Errorf("unknown client: %d, Location %q; want a 400 page", res.StatusCode, res.Header.Get("Location"))
	}
	// The token endpoint wants the same redirect URI as the request.
	verifier, challenge := pkce()
	code := r.consent(r.authParams(clientID, redirect, challenge, ResourceURL(r.base, "acme", "")), session).Get("code")
	status, body := r.token(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect + "/"}, "client_id": {clientID}, "code_verifier": {verifier}})
	if status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("token with another redirect_uri: %d %v", status, body)
	}
}

// TestRegistration checks dynamic client registration: what is refused, naming the
// field, and that a confidential client gets a secret it must then use.
func TestRegistration(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	for _, tc := range []struct{ body, wantErr, wantField string }{
		{`{}`, "invalid_redirect_uri", "redirect_uris"},
		{`{"redirect_uris":["http://evil.example/cb"]}`, "invalid_redirect_uri", "redirect_uris[0]"},
		{`{"redirect_uris":["https://app.example/cb#frag"]}`, "invalid_redirect_uri", "redirect_uris[0]"},
		{`{"redirect_uris":["javascript:alert(1)"]}`, "invalid_redirect_uri", "redirect_uris[0]"},
		{`{"redirect_uris":["https://app.example/cb"],"token_endpoint_auth_method":"private_key_jwt"}`, "invalid_client_metadata", "token_endpoint_auth_method"},
		{`{"redirect_uris":["https://app.example/cb"],"grant_types":["client_credentials"]}`, "invalid_client_metadata", "grant_types"},
		{`{"redirect_uris":["https://app.example/cb"],"logo_uri":"http://app.example/logo.png"}`, "invalid_client_metadata", "logo_uri"},
		{`not json`, "invalid_client_metadata", "body"},
	} {
		status, body := r.register(tc.body)
		if status != http.StatusBadRequest || body["error"] != tc.wantErr || !strings.HasPrefix(body["error_description"].(string), tc.wantField+":") {
			t.Errorf("%s: %d %v, want %s naming %s", tc.body, status, body, tc.wantErr, tc.wantField)
		}
	}
	var n int64
	r.db.Table("oauth_clients").Count(&n)
	if n != 0 {
		t.Errorf("%d clients stored after refused registrations", n)
	}
	status, body := r.register(`{"client_name":"Server app","redirect_uris":["https://app.example/cb","com.example.app:/cb"]}`)
	if status != http.StatusCreated || body["token_endpoint_auth_method"] != "client_secret_basic" || body["client_secret"] == nil {
		t.Fatalf("confidential registration: %d %v", status, body)
	}
	id, secret := body["client_id"].(string), body["client_secret"].(string)
	var stored client
	r.db.Where("id = ?", id).Take(&stored)
	if stored.SecretHash == secret || stored.SecretHash != hashSecret(secret) {
		t.Error("the client secret is not stored as its hash")
	}
	for name, form := range map[string]url.Values{
		"no secret":    {"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {id}},
		"wrong secret": {"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {id}, "client_secret": {"sbs_wrong"}},
	} {
		if status, body := r.token(form); status != http.StatusUnauthorized || body["error"] != "invalid_client" {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}
	if status, body := r.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {id}, "client_secret": {secret}}); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("right secret, unknown refresh token: %d %v", status, body)
	}
}
