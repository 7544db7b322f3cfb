package openapis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/openapi"
)

// tokenTimeout bounds a request to an API's token endpoint.
const tokenTimeout = 30 * time.Second

// flow is the OAuth 2.0 flow of an API's scheme that the hub runs with the API's OAuth
// app: the authorization code flow (a person signs in) or client credentials (the app
// itself). Nil when its scheme is not OAuth 2.0 with one of them, or no app is set.
type flow struct {
	authURL, tokenURL string
	scopes            []string
	clientCredentials bool
}

// flowOf reads the flow of an API's scheme from its description: authorization code
// when it offers it, else client credentials. A flow whose endpoints are not absolute
// http or https URLs is none: the hub never sends a person or a secret to a
// javascript: or relative URL.
func flowOf(d *openapi3.T, auth string) *flow {
	_, s := openapi.Scheme(d, auth)
	if s == nil || !strings.EqualFold(s.Type, "oauth2") || s.Flows == nil {
		return nil
	}
	sorted := func(m map[string]string) []string {
		out := make([]string, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	if f := s.Flows.AuthorizationCode; f != nil && openapi.LinkURL(f.AuthorizationURL) != "" && openapi.LinkURL(f.TokenURL) != "" {
		return &flow{authURL: f.AuthorizationURL, tokenURL: f.TokenURL, scopes: sorted(f.Scopes)}
	}
	if f := s.Flows.ClientCredentials; f != nil && openapi.LinkURL(f.TokenURL) != "" {
		return &flow{tokenURL: f.TokenURL, scopes: sorted(f.Scopes), clientCredentials: true}
	}
	return nil
}

// authKinds are how an API's connections are made: with its OAuth app when it has one
// (the authorization code flow, or client credentials), and by a pasted token except
// for client credentials.
func authKinds(f *flow, app bool) []providers.AuthKind {
	switch {
	case f != nil && app && f.clientCredentials:
		return []providers.AuthKind{providers.AuthClientCredentials}
	case f != nil && app:
		return []providers.AuthKind{providers.AuthOAuth2, providers.AuthAPIKey}
	}
	return []providers.AuthKind{providers.AuthAPIKey}
}

// secretAAD binds a sealed OAuth client secret to its API and tenant.
func secretAAD(tenant switchboard.TenantID, id string) []byte {
	return []byte("openapi-oauth-secret\x00" + string(tenant) + "\x00" + id)
}

// SealedRecords returns the APIs' sealed OAuth client secrets as records for key
// rotation (`switchboard keys rotate`).
func (s *Store) SealedRecords(kr keyring.Keyring) keyring.SealedRecords {
	return &keyring.SealedTable{
		DB: s.db, Keyring: kr, Name: "openapi_providers", Table: "openapi_providers",
		Parts: []keyring.SealedColumns{{Sealed: "oauth_secret_sealed", KeyID: "oauth_secret_key_id",
			AAD: func(r keyring.SealedRow) []byte { return secretAAD(r.TenantID, r.ID) }}},
	}
}

// app returns the API's OAuth app: its client id and opened secret.
func (s *Service) app(ctx context.Context, a API) (id, secret string, err error) {
	if a.OAuthClientID == "" {
		return "", "", switchboard.Invalid("provider", "the API "+a.Name+" has no OAuth app: an admin adds it again with client_id and client_secret")
	}
	if len(a.OAuthSecretSealed) == 0 {
		return a.OAuthClientID, "", nil
	}
	if s.kr == nil {
		return "", "", switchboard.Internal(errors.New("openapis: no keyring to open an OAuth client secret"))
	}
	plain, err := s.kr.Open(ctx, a.OAuthSecretKeyID, a.OAuthSecretSealed, secretAAD(a.TenantID, a.ID))
	if err != nil {
		return "", "", switchboard.Internal(fmt.Errorf("open the OAuth client secret of API %s: %w", a.Name, err))
	}
	return a.OAuthClientID, string(plain), nil
}

// tokenContext makes x/oauth2's token requests go through the SSRF guard, bounded,
// and not follow a redirect: they carry the app's secret and a code or a refresh token.
func (s *Service) tokenContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	return context.WithValue(ctx, oauth2.HTTPClient, egress.Client(s.tokenTransport, tokenTimeout, false)), cancel
}

// oauthFlowState is what a started authorization code flow keeps, sealed with its state.
type oauthFlowState struct {
	API      string `json:"api"`
	APIID    string `json:"api_id"`
	Verifier string `json:"verifier"`
}

// Authorize starts connecting p's account of the tenant's API with OAuth (the
// authorization code flow, PKCE S256, with the API's OAuth app): the answer is where to
// send the browser, and the cookie the hub's callback requires.
func (s *Service) Authorize(ctx context.Context, p switchboard.Principal, name string, shared bool, label string) (connections.Authorization, error) {
	b, a, err := s.withApp(ctx, p, name)
	if err != nil {
		return connections.Authorization{}, err
	}
	if b.flow.clientCredentials {
		return connections.Authorization{}, switchboard.Invalid("provider", b.spec.Title+" connects with its OAuth app's client credentials: POST /api/connections with the provider alone")
	}
	redirect := s.conns.RedirectURL()
	if redirect == "" {
		return connections.Authorization{}, switchboard.Errorf(switchboard.CodeUnavailable, "OAuth is not configured on this server (no public URL for its callback)")
	}
	verifier := oauth2.GenerateVerifier()
	extra, err := json.Marshal(oauthFlowState{API: name, APIID: a.ID, Verifier: verifier})
	if err != nil {
		return connections.Authorization{}, switchboard.Internal(err)
	}
	if label == "" {
		label = b.spec.Title
	}
	cfg := oauth2.Config{ClientID: a.OAuthClientID, Endpoint: oauth2.Endpoint{AuthURL: b.flow.authURL, TokenURL: b.flow.tokenURL}, RedirectURL: redirect, Scopes: b.flow.scopes}
	return s.conns.StartExternalOAuth(ctx, p, connections.ExternalStart{
		Provider: Provider, ClientID: a.OAuthClientID, Shared: shared, Label: label, Extra: extra,
		AuthURL: func(state string) string { return cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)) },
	})
}

// withApp is the tenant's API with its flow and OAuth app, for p (a user).
func (s *Service) withApp(ctx context.Context, p switchboard.Principal, name string) (*built, API, error) {
	if p.Kind != switchboard.PrincipalUser {
		return nil, API{}, switchboard.Errorf(switchboard.CodeForbidden, "only a user can connect an account")
	}
	b, err := s.build(ctx, p.TenantID, name, "")
	if switchboard.CodeOf(err) == switchboard.CodeNotFound {
		return nil, API{}, switchboard.Invalid("provider", fmt.Sprintf("the tenant has no API named %q", name))
	}
	if err != nil {
		return nil, API{}, err
	}
	a, err := s.store.get(ctx, p.TenantID, name)
	if err != nil {
		return nil, API{}, err
	}
	if b.flow == nil || a.OAuthClientID == "" {
		return nil, API{}, switchboard.Invalid("provider", b.spec.Title+" has no OAuth app: connect it with a token, or an admin adds it again with client_id and client_secret")
	}
	return b, a, nil
}

// finishOAuth exchanges a callback's code at the API's token endpoint with its OAuth app
// (the provider's ConnectionOAuth.Finish).
func (s *Service) finishOAuth(ctx context.Context, cb providers.OAuthCallback) (providers.NewConnection, providers.Credentials, error) {
	var st oauthFlowState
	if err := json.Unmarshal(cb.Extra, &st); err != nil {
		return providers.NewConnection{}, providers.Credentials{}, switchboard.Internal(fmt.Errorf("decode oauth flow: %w", err))
	}
	a, err := s.store.get(ctx, cb.Tenant, st.API)
	if err != nil || a.ID != st.APIID {
		return providers.NewConnection{}, providers.Credentials{}, switchboard.Invalid("state", "the API was deleted while you signed in; nothing was connected")
	}
	b, err := s.build(ctx, cb.Tenant, st.API, st.APIID)
	if err != nil {
		return providers.NewConnection{}, providers.Credentials{}, err
	}
	id, secret, err := s.app(ctx, a)
	if err != nil {
		return providers.NewConnection{}, providers.Credentials{}, err
	}
	cfg := oauth2.Config{ClientID: id, ClientSecret: secret, Endpoint: oauth2.Endpoint{TokenURL: b.flow.tokenURL}, RedirectURL: cb.RedirectURI, Scopes: b.flow.scopes}
	tctx, cancel := s.tokenContext(ctx)
	defer cancel()
	tok, err := cfg.Exchange(tctx, cb.Code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		return providers.NewConnection{}, providers.Credentials{}, tokenError(b.spec.Title, "exchange the authorization code", err)
	}
	return providers.NewConnection{AuthKind: providers.AuthOAuth2, AccountID: switchboard.NewID("acct"), AccountLabel: b.spec.Title, Scopes: b.flow.scopes,
			Meta: map[string]string{metaAPI: st.API, metaAPIID: st.APIID}},
		providers.Credentials{AccessToken: tok.AccessToken, TokenType: "Bearer", RefreshToken: tok.RefreshToken, Expiry: tok.Expiry, ClientID: id}, nil
}

// refreshOAuth renews a connection's token at its API's token endpoint: with its
// refresh token, or, for client credentials, by asking again (the provider's
// ConnectionOAuth.Refresh).
func (s *Service) refreshOAuth(ctx context.Context, c providers.Connection, creds providers.Credentials) (providers.Credentials, error) {
	a, err := s.store.get(ctx, c.Tenant, c.Meta[metaAPI])
	if err != nil || a.ID != c.Meta[metaAPIID] {
		return providers.Credentials{}, switchboard.Invalid("provider", "the connection's API was deleted")
	}
	b, err := s.build(ctx, c.Tenant, a.Name, a.ID)
	if err != nil {
		return providers.Credentials{}, err
	}
	if b.flow == nil {
		return providers.Credentials{}, switchboard.Invalid("provider", b.spec.Title+"'s scheme is no longer OAuth 2.0")
	}
	id, secret, err := s.app(ctx, a)
	if err != nil {
		return providers.Credentials{}, err
	}
	if creds.ClientID != "" && creds.ClientID != id {
		return providers.Credentials{}, switchboard.Invalid("provider", "the OAuth app that issued the token is no longer the API's; reconnect the account")
	}
	tctx, cancel := s.tokenContext(ctx)
	defer cancel()
	var tok *oauth2.Token
	if creds.RefreshToken == "" && b.flow.clientCredentials {
		tok, err = s.clientCredentials(tctx, b.flow, id, secret)
	} else {
		cfg := oauth2.Config{ClientID: id, ClientSecret: secret, Endpoint: oauth2.Endpoint{TokenURL: b.flow.tokenURL}, Scopes: b.flow.scopes}
		tok, err = cfg.TokenSource(tctx, &oauth2.Token{RefreshToken: creds.RefreshToken}).Token()
	}
	if err != nil {
		return providers.Credentials{}, tokenError(b.spec.Title, "renew the token", err)
	}
	return providers.Credentials{AccessToken: tok.AccessToken, TokenType: "Bearer", RefreshToken: tok.RefreshToken, Expiry: tok.Expiry, ClientID: id}, nil
}

// clientCredentials asks the API's token endpoint for a token for its OAuth app.
func (s *Service) clientCredentials(ctx context.Context, f *flow, id, secret string) (*oauth2.Token, error) {
	cfg := clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: f.tokenURL, Scopes: f.scopes}
	return cfg.Token(ctx)
}

// connectClientCredentials connects the API with its OAuth app's client credentials: a
// first token proves the app, and is renewed when it expires.
func (s *Service) connectClientCredentials(ctx context.Context, p switchboard.Principal, name string, in ConnectInput) (connections.Connection, error) {
	b, a, err := s.withApp(ctx, p, name)
	if err != nil {
		return connections.Connection{}, err
	}
	id, secret, err := s.app(ctx, a)
	if err != nil {
		return connections.Connection{}, err
	}
	tctx, cancel := s.tokenContext(ctx)
	defer cancel()
	tok, err := s.clientCredentials(tctx, b.flow, id, secret)
	if err != nil {
		return connections.Connection{}, tokenError(b.spec.Title, "get a token with the API's client credentials", err)
	}
	label := b.spec.Title
	if in.Label != nil && strings.TrimSpace(*in.Label) != "" {
		label = strings.TrimSpace(*in.Label)
	}
	c := connections.Connection{
		Provider: Provider, AuthKind: providers.AuthClientCredentials, AccountID: switchboard.NewID("acct"), AccountLabel: label,
		Scopes: strings.Join(b.flow.scopes, " "), Meta: map[string]string{metaAPI: name, metaAPIID: a.ID}, Shared: in.Shared, Status: connections.StatusActive,
	}
	return s.conns.CreateExternal(ctx, p, c, connections.Credentials{AccessToken: tok.AccessToken, TokenType: "Bearer", Expiry: tok.Expiry, ClientID: id})
}

// tokenError is a refused or failed token request, without the answer's body: a
// refused grant or client is reconnect, an address the guard refused invalid.
func tokenError(title, doing string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		code := switchboard.CodeUpstream
		if re.ErrorCode == "invalid_grant" || re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client" || status == http.StatusUnauthorized {
			code = switchboard.CodeReconnect
		}
		msg := fmt.Sprintf("%s's authorization server refused to %s", title, doing)
		if re.ErrorCode != "" {
			msg += ": " + url.QueryEscape(re.ErrorCode)
		}
		return &providers.UpstreamError{Provider: Provider, Status: status, Code: code, Reason: url.QueryEscape(re.ErrorCode), Message: msg}
	}
	var refused *egress.RefusedError
	if errors.As(err, &refused) {
		return &switchboard.Error{Code: switchboard.CodeInvalid, Field: "provider", Message: fmt.Sprintf("%s's authorization server is at %s, a private, loopback, link-local or reserved address", title, refused.Addr), Err: err}
	}
	return &switchboard.Error{Code: switchboard.CodeUpstream, Message: fmt.Sprintf("could not reach %s's authorization server to %s; try again", title, doing), Err: err}
}
