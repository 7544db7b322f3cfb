package connections

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/providers"
)

// ExternalStart starts the flow of a provider whose OAuth is per connection
// (providers.Spec.ConnectionOAuth). AuthURL builds the authorization URL for the flow's
// state; Extra is sealed with the state and handed to the provider's Finish.
type ExternalStart struct {
	Provider string
	ClientID string
	Shared   bool
	Label    string
	Extra    []byte
	AuthURL  func(state string) string
}

// connectionOAuth is the provider's per-connection OAuth, or nil when it has none.
func (s *Service) connectionOAuth(provider string) *providers.ConnectionOAuth {
	if spec, ok := s.reg.Provider(provider); ok {
		return spec.ConnectionOAuth
	}
	return nil
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
	if s.connectionOAuth(in.Provider) == nil {
		return Authorization{}, switchboard.Internal(fmt.Errorf("start external oauth: provider %s has no per-connection OAuth", in.Provider))
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
func (s *Service) finishExternal(ctx context.Context, x *providers.ConnectionOAuth, row oauthStateRow, payload statePayload, in CallbackInput) (Connection, error) {
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
	made, creds, err := x.Finish(ctx, providers.OAuthCallback{Tenant: row.TenantID, UserID: row.UserID, Code: in.Code, RedirectURI: row.RedirectURI, Extra: payload.Extra})
	if err != nil {
		return Connection{}, err
	}
	c := Connection{Provider: row.Provider, AuthKind: made.AuthKind, AccountID: made.AccountID, AccountLabel: made.AccountLabel,
		Scopes: strings.Join(made.Scopes, " "), Meta: made.Meta, Status: StatusActive}
	c.OwnerUserID = row.UserID
	c.Shared = payload.Shared
	if payload.Label != "" {
		c.AccountLabel = payload.Label
	}
	p := switchboard.Principal{TenantID: row.TenantID, Kind: switchboard.PrincipalUser, UserID: row.UserID}
	return s.CreateExternal(ctx, p, c, creds)
}

// CreateExternal stores a connection of a provider whose connections it makes itself
// (a remote MCP server's registration, a tenant's API), made by p (a user) after the
// provider checked it: it is audited and subscribers are told. A
// connection the store refuses as a duplicate is a conflict.
func (s *Service) CreateExternal(ctx context.Context, p switchboard.Principal, c Connection, creds Credentials) (Connection, error) {
	if p.Kind != switchboard.PrincipalUser {
		return Connection{}, switchboard.Errorf(switchboard.CodeForbidden, "only a user can connect an account")
	}
	c.OwnerUserID = p.UserID
	if c.Status == "" {
		c.Status = StatusActive
	}
	c.AccountLabel = strings.TrimSpace(c.AccountLabel)
	if err := s.checkLabel(ctx, p.TenantID, c); err != nil {
		return Connection{}, err
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
// its record does not show (a remote MCP server changed its tools, prompts or resources).
func (s *Service) NotifyChanged(tenant switchboard.TenantID, connectionID string) {
	s.notify(context.Background(), events.RemoteToolsChanged, tenant, connectionID)
}

// refreshExternal refreshes an external connection's token while holding the lease.
func (s *Service) refreshExternal(ctx context.Context, x *providers.ConnectionOAuth, c *Connection, creds Credentials, claim string) (Credentials, error) {
	if x.Refresh == nil {
		_ = s.store.releaseRefresh(ctx, c.TenantID, c.ID, claim, "")
		return Credentials{}, switchboard.Errorf(switchboard.CodeUnavailable, "%s connections cannot refresh tokens", c.Provider)
	}
	xctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	defer cancel()
	next, err := x.Refresh(xctx, c.Ref(), creds)
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
