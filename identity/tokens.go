package identity

import (
	"context"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/switchboard-hub/switchboard"
)

// accessTokenType is the JWT "typ" of access tokens (RFC 9068), so no other JWT this
// deployment might sign is taken for one.
const accessTokenType = "at+jwt"

// accessClaims are an access token's claims: the standard ones (aud is the MCP URL)
// and the tenant, grant, client and scope.
type accessClaims struct {
	jwt.Claims
	Tenant   switchboard.TenantID `json:"tid"`
	Grant    string               `json:"gid"`
	ClientID string               `json:"client_id"`
	Scope    string               `json:"scope"`
}

// LooksLikeAccessToken reports whether a bearer credential is shaped like one of the
// server's access tokens (a compact JWS) rather than an API key.
func LooksLikeAccessToken(token string) bool {
	return !strings.HasPrefix(token, "sbk_") && strings.Count(token, ".") == 2
}

// issueAccessToken signs an access token for the grant, valid at its resource only.
func (s *Server) issueAccessToken(ctx context.Context, g Grant) (string, error) {
	now := s.now()
	k, err := s.keys.current(ctx, g.TenantID, now)
	if err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.key},
		(&jose.SignerOptions{}).WithType(accessTokenType).WithHeader("kid", k.kid))
	if err != nil {
		return "", switchboard.Internal(fmt.Errorf("make token signer: %w", err))
	}
	sub := "user:" + g.UserID
	if g.AgentID != "" {
		sub = "agent:" + g.AgentID
	}
	c := accessClaims{
		Claims: jwt.Claims{
			Issuer: s.Issuer(), Subject: sub, Audience: jwt.Audience{g.Resource},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(AccessTokenLifetime)),
			ID: switchboard.NewID("jti"),
		},
		Tenant: g.TenantID, Grant: g.ID, ClientID: g.ClientID, Scope: g.Scope,
	}
	tok, err := jwt.Signed(signer).Claims(c).Serialize()
	if err != nil {
		return "", switchboard.Internal(fmt.Errorf("sign access token: %w", err))
	}
	return tok, nil
}

// AuthenticateToken returns who an access token stands for at resource, the MCP URL
// it was presented at: the token must be signed by a key of its tenant, unexpired,
// issued by this server for exactly that URL, and its grant still live. Any other
// token is refused with unauthorized.
func (s *Server) AuthenticateToken(ctx context.Context, token, resource string) (switchboard.Principal, error) {
	c, err := s.verifyAccessToken(ctx, token)
	if err != nil {
		return switchboard.Principal{}, err
	}
	if len(c.Audience) != 1 || c.Audience[0] != resource {
		return switchboard.Principal{}, &switchboard.Error{Code: switchboard.CodeUnauthorized,
			Message: "this access token was issued for another MCP URL; connect to " + resource + " to get one for it"}
	}
	p, granted, err := s.grantPrincipal(ctx, c.Tenant, c.Grant)
	if err != nil {
		return switchboard.Principal{}, err
	}
	if granted != resource {
		return switchboard.Principal{}, errInvalidToken()
	}
	return p, nil
}

// verifyAccessToken checks an access token's signature (by a key of the tenant it
// names), type, issuer and expiry, and returns its claims.
func (s *Server) verifyAccessToken(ctx context.Context, token string) (accessClaims, error) {
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(parsed.Headers) != 1 {
		return accessClaims{}, errInvalidToken()
	}
	h := parsed.Headers[0]
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != accessTokenType || h.KeyID == "" {
		return accessClaims{}, errInvalidToken()
	}
	// The tenant only picks the key to verify with: a token naming another tenant than
	// its signer's does not verify.
	var unverified accessClaims
	if err := parsed.UnsafeClaimsWithoutVerification(&unverified); err != nil || unverified.Tenant == "" {
		return accessClaims{}, errInvalidToken()
	}
	now := s.now()
	pub, err := s.keys.verifier(ctx, unverified.Tenant, h.KeyID, now)
	if err != nil {
		return accessClaims{}, err
	}
	if pub == nil {
		return accessClaims{}, errInvalidToken()
	}
	var c accessClaims
	if err := parsed.Claims(pub, &c); err != nil {
		return accessClaims{}, errInvalidToken()
	}
	if c.Expiry == nil || c.Grant == "" || c.Tenant != unverified.Tenant {
		return accessClaims{}, errInvalidToken()
	}
	if err := c.Claims.ValidateWithLeeway(jwt.Expected{Issuer: s.Issuer(), Time: now}, 30*time.Second); err != nil {
		return accessClaims{}, errInvalidToken()
	}
	return c, nil
}
