package connections

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/events"
)

// ExternalOAuth is the OAuth authorization-code flow and token refresh of a provider
// outside the registry, whose authorization server is found per connection (a remote
// MCP server's, through its protected resource metadata). The service keeps the flow's
// state like any other flow's (hashed, single use, bound to the browser and the user)
// and stores and refreshes the connection's tokens like any other's (sealed,
// single-flight across processes); the provider does the talking to its servers.
type ExternalOAuth struct {
	// Finish exchanges the code of a callback and returns the connection to store
	// (provider, auth kind, account, meta) with its credentials.
	Finish func(ctx context.Context, cb ExternalCallback) (Connection, Credentials, error)
	// Refresh returns the connection's credentials refreshed with their refresh token.
	// An error with code reconnect or invalid says the refresh token was refused.
	Refresh func(ctx context.Context, c Connection, creds Credentials) (Credentials, error)
}

// ExternalCallback is what Finish gets: who started the flow, the code, the redirect
// URI the code was issued for, and what StartExternalOAuth kept for the flow.
type ExternalCallback struct {
	TenantID    switchboard.TenantID
	UserID      string
	Code        string
	RedirectURI string
	Extra       []byte
}

// ExternalStart starts an external flow. AuthURL builds the authorization URL for the
// flow's state; Extra is sealed with the state and handed to Finish.
type ExternalStart struct {
	Provider string
	ClientID string
	Shared   bool
	Label    string
	Extra    []byte
	AuthURL  func(state string) string
}

// RegisterExternalOAuth makes the service finish and refresh the provider's flows with
// x. Call it while wiring, before the service is used.
func (s *Service) RegisterExternalOAuth(provider string, x ExternalOAuth) {
	if s.external == nil {
		s.external = map[string]ExternalOAuth{}
	}
	s.external[provider] = x
}

// RedirectURL is the hub's OAuth callback URL ("" when OAuth is not configured).
func (s *Service) RedirectURL() string { return s.oauth.RedirectURL }

// StartExternalOAuth records the state of an external flow started by p (as Authorize
// does for registry providers) and returns the authorization URL and the cookie the
// browser must carry back to the callback.
func (s *Service) StartExternalOAuth(ctx context.Context, p switchboard.Principal, in ExternalStart) (Authorization, error) {
	if p.Kind != switchboard.PrincipalUser {
		return Authorization{}, switchboard.Errorf(switchboard.CodeForbidden, "only a user can connect an account")
	}
	if _, ok := s.external[in.Provider]; !ok {
		return Authorization{}, switchboard.Internal(fmt.Errorf("start external oauth: provider %s is not registered", in.Provider))
	}
	if s.oauth.RedirectURL == "" {
		return Authorization{}, switchboard.Internal(fmt.Errorf("start external oauth: no OAuth redirect URL is configured"))
	}
	state := switchboard.RandomToken(32)
	browser := switchboard.RandomToken(32)
	now := s.now().UTC().Truncate(time.Microsecond)
	row := &oauthStateRow{
		ID: secretHash(state), TenantID: p.TenantID, UserID: p.UserID, Provider: in.Provider, ClientID: in.ClientID,
		BrowserHash: secretHash(browser), RedirectURI: s.oauth.RedirectURL, ExpiresAt: now.Add(stateTTL), CreatedAt: now,
	}
	if err := s.store.createOAuthState(ctx, row, statePayload{Shared: in.Shared, Label: in.Label, Extra: in.Extra}); err != nil {
		return Authorization{}, err
	}
	cookiePath := "/oauth/callback"
	secure := false
	if u, err := url.Parse(s.oauth.RedirectURL); err == nil {
		cookiePath = u.Path
		secure = u.Scheme == "https"
	}
	return Authorization{
		URL: in.AuthURL(state), CookieName: OAuthCookieName(state), CookieValue: browser,
		CookiePath: cookiePath, CookieSecure: secure, ExpiresAt: row.ExpiresAt,
	}, nil
}

// finishExternal ends an external flow whose state, browser and user were checked.
func (s *Service) finishExternal(ctx context.Context, x ExternalOAuth, row oauthStateRow, payload statePayload, in CallbackInput) (Connection, error) {
	if in.Error != "" {
		if in.Error == "access_denied" {
			return Connection{}, switchboard.Errorf(switchboard.CodeForbidden, "access was not granted, so nothing was connected")
		}
		return Connection{}, &switchboard.Error{Code: switchboard.CodeUpstream, Field: "error", Message: fmt.Sprintf("the authorization server ended the authorization with %q, so nothing was connected", oauthErrorCode(in.Error))}
	}
	if in.Code == "" {
		return Connection{}, switchboard.Invalid("code", "is missing from the authorization server's redirect")
	}
	if row.RedirectURI != s.oauth.RedirectURL {
		return Connection{}, switchboard.Invalid("state", "was issued for another redirect URL: start connecting again")
	}
	c, creds, err := x.Finish(ctx, ExternalCallback{TenantID: row.TenantID, UserID: row.UserID, Code: in.Code, RedirectURI: row.RedirectURI, Extra: payload.Extra})
	if err != nil {
		return Connection{}, err
	}
	c.OwnerUserID = row.UserID
	c.Shared = payload.Shared
	if payload.Label != "" {
		c.AccountLabel = payload.Label
	}
	p := switchboard.Principal{TenantID: row.TenantID, Kind: switchboard.PrincipalUser, UserID: row.UserID}
	return s.CreateExternal(ctx, p, c, creds)
}

// CreateExternal stores a connection of a provider outside the registry, made by p (a
// user) after the provider checked it: it is audited and subscribers are told. A
// connection the store refuses as a duplicate is a conflict.
func (s *Service) CreateExternal(ctx context.Context, p switchboard.Principal, c Connection, creds Credentials) (Connection, error) {
	if p.Kind != switchboard.PrincipalUser {
		return Connection{}, switchboard.Errorf(switchboard.CodeForbidden, "only a user can connect an account")
	}
	c.OwnerUserID = p.UserID
	if c.Status == "" {
		c.Status = StatusActive
	}
	if label := strings.TrimSpace(c.AccountLabel); label == "" || utf8.RuneCountInString(label) > 255 {
		return Connection{}, switchboard.Invalid("label", "must be 1 to 255 characters")
	}
	if err := s.store.Create(ctx, p.TenantID, &c, creds); err != nil {
		s.record(p, audit.KindConnectionCreated, "", switchboard.CodeOf(err), c.Provider+" "+c.AccountLabel)
		return Connection{}, err
	}
	s.record(p, audit.KindConnectionCreated, c.ID, "", c.Provider+" "+c.AccountLabel+" ("+string(c.AuthKind)+")")
	s.notify(ctx, events.ConnectionAdded, p.TenantID, c.ID)
	return c, nil
}

// NotifyChanged tells the subscribers that something about a connection changed that
// its record does not show (a remote MCP server changed its tool list).
func (s *Service) NotifyChanged(tenant switchboard.TenantID, connectionID string) {
	s.notify(context.Background(), events.RemoteToolsChanged, tenant, connectionID)
}

// refreshExternal refreshes an external connection's token while holding the lease.
func (s *Service) refreshExternal(ctx context.Context, x ExternalOAuth, c *Connection, creds Credentials, claim string) (Credentials, error) {
	if x.Refresh == nil {
		_ = s.store.releaseRefresh(ctx, c.TenantID, c.ID, claim, "")
		return Credentials{}, switchboard.Errorf(switchboard.CodeUnavailable, "%s connections cannot refresh tokens", c.Provider)
	}
	xctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	defer cancel()
	next, err := x.Refresh(xctx, *c, creds)
	if err != nil {
		code := switchboard.CodeOf(err)
		if code == switchboard.CodeInternal {
			err = &switchboard.Error{Code: switchboard.CodeUpstream, Message: "could not refresh the token; try again", Err: err}
		}
		return s.refreshFailed(ctx, c, claim, err, code == switchboard.CodeReconnect || code == switchboard.CodeInvalid)
	}
	if next.RefreshToken == "" {
		next.RefreshToken = creds.RefreshToken
	}
	if next.ClientID == "" {
		next.ClientID, next.ClientSecret = creds.ClientID, creds.ClientSecret
	}
	if _, err := s.store.storeRefreshed(ctx, c.TenantID, c.ID, c.Version, claim, next, s.now()); err != nil {
		s.logger().ErrorContext(ctx, "store refreshed token", "connection", c.ID, "err", err)
		_, latest, oerr := s.store.Open(ctx, c.TenantID, c.ID)
		if oerr != nil {
			return Credentials{}, err
		}
		return latest, nil
	}
	return next, nil
}
