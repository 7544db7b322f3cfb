package connections

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/events"
)

// The token lifecycle's timings.
const (
	// OnDemandWindow: a call refreshes a token that expires within it.
	OnDemandWindow = 5 * time.Minute
	// BackgroundWindow: the background refresher refreshes tokens expiring within it.
	BackgroundWindow = 10 * time.Minute
	// IdleRefresh: a refresh token not used for this long is exercised, for providers
	// that revoke idle ones.
	IdleRefresh = 24 * time.Hour
	// claimLease bounds how long one process may hold a connection's refresh lease; a
	// refresh itself is bounded by exchangeTimeout, well within it.
	claimLease = 2 * exchangeTimeout
	// claimPoll is how often a process waiting for another's refresh reads the row again.
	claimPoll = 50 * time.Millisecond
)

// refreshKind says why a refresh is wanted.
type refreshKind struct {
	window time.Duration // refresh when the access token expires within it
	idle   time.Duration // and when the refresh token was not used for this long (0: never)
}

// due reports whether c's credentials need a refresh now.
func (k refreshKind) due(c *Connection, creds *Credentials, now time.Time) bool {
	if !renewable(c, creds) {
		return false
	}
	if !creds.Expiry.IsZero() && creds.Expiry.Before(now.Add(k.window)) {
		return true
	}
	if k.idle > 0 {
		last := c.CreatedAt
		if c.RefreshedAt != nil {
			last = *c.RefreshedAt
		}
		return last.Before(now.Add(-k.idle))
	}
	return false
}

// fresh returns the connection's credentials, refreshed first when k says so. Refresh
// is single-flight per connection in this process (concurrent callers share one
// refresh) and across processes sharing the database (a lease on the row: a process
// that finds it taken waits for the holder's result and reads it).
func (s *Service) fresh(ctx context.Context, tenant switchboard.TenantID, id string, k refreshKind) (Credentials, error) {
	v, err, _ := s.flight.Do(string(tenant)+"\x00"+id, func() (any, error) {
		return s.refreshOnce(context.WithoutCancel(ctx), tenant, id, k)
	})
	if err != nil {
		return Credentials{}, err
	}
	return v.(Credentials), nil
}

func (s *Service) refreshOnce(ctx context.Context, tenant switchboard.TenantID, id string, k refreshKind) (Credentials, error) {
	deadline := s.now().Add(claimLease)
	for {
		c, creds, err := s.store.Open(ctx, tenant, id)
		if err != nil {
			return Credentials{}, err
		}
		now := s.now()
		if !k.due(&c, &creds, now) {
			return creds, nil
		}
		if c.Status == StatusNeedsReconnect || c.Status == StatusRevoked {
			return Credentials{}, reconnectError(&c)
		}
		claim := switchboard.NewID("rfc")
		ok, err := s.store.claimRefresh(ctx, tenant, id, claim, now, now.Add(claimLease))
		if err != nil {
			return Credentials{}, err
		}
		if !ok {
			// Another process is refreshing: wait for its result.
			if s.now().After(deadline) {
				return Credentials{}, &switchboard.Error{Code: switchboard.CodeUnavailable, Message: "the connection's token is being refreshed elsewhere and it takes too long; retry shortly"}
			}
			select {
			case <-ctx.Done():
				return Credentials{}, ctx.Err()
			case <-time.After(claimPoll):
			}
			continue
		}
		// Under the lease, read again: the holder before us may have just finished.
		c, creds, err = s.store.Open(ctx, tenant, id)
		if err != nil {
			_ = s.store.releaseRefresh(ctx, tenant, id, claim, "")
			return Credentials{}, err
		}
		if !k.due(&c, &creds, s.now()) {
			if err := s.store.releaseRefresh(ctx, tenant, id, claim, ""); err != nil {
				return Credentials{}, err
			}
			return creds, nil
		}
		fresh, err := s.refreshClaimed(ctx, &c, creds, claim)
		s.oauth.Metrics.TokenRefresh(c.Provider, outcome(err))
		return fresh, err
	}
}

// refreshClaimed refreshes c's token at the provider while holding the lease.
func (s *Service) refreshClaimed(ctx context.Context, c *Connection, creds Credentials, claim string) (Credentials, error) {
	if x := s.connectionOAuth(c.Provider); x != nil {
		return s.refreshExternal(ctx, x, c, creds, claim)
	}
	spec, ok := s.reg.Provider(c.Provider)
	if !ok || spec.OAuth == nil {
		_ = s.store.releaseRefresh(ctx, c.TenantID, c.ID, claim, "")
		return Credentials{}, switchboard.Errorf(switchboard.CodeUnavailable, "provider %s cannot refresh tokens in this deployment", c.Provider)
	}
	app, endpoints, err := s.oauthApp(ctx, c.TenantID, spec)
	switch {
	case switchboard.CodeOf(err) == switchboard.CodeInvalid:
		// No app here, neither the tenant's nor the deployment's: this node's
		// configuration, not the connection's fault. Another node refreshes it.
		return s.refreshFailed(ctx, c, claim, localCause("has no OAuth app for "+spec.Title), false)
	case err != nil:
		// The app could not be read (database or keyring down): retried later.
		return s.refreshFailed(ctx, c, claim, err, false)
	case creds.ClientID != "" && app.ClientID != creds.ClientID && !app.shared():
		// The deployment's app configured on this node is another one than the one
		// that issued the token: this node's configuration again.
		return s.refreshFailed(ctx, c, claim, localCause("has another OAuth app for "+spec.Title+" than the one that issued the token"), false)
	case creds.ClientID != "" && app.ClientID != creds.ClientID:
		// The tenant or the operator replaced the app (shared state): the token cannot be
		// refreshed.
		return s.refreshFailed(ctx, c, claim, switchboard.Invalid("provider", "the OAuth app that issued the token is no longer configured; reconnect the account"), true)
	}
	// A refreshed token that cannot be sealed would be lost, and with it a rotated
	// refresh token: check that this node's keyring seals before asking the provider.
	if _, _, err := sealCredentials(ctx, s.store.kr, c.TenantID, c.ID, creds); err != nil {
		return s.refreshFailed(ctx, c, claim, localCause("cannot seal credentials ("+err.Error()+")"), false)
	}
	xctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	defer cancel()
	tok, err := oauthConfig(app, endpoints, "").TokenSource(s.tokenContext(xctx, spec), &oauth2.Token{RefreshToken: creds.RefreshToken}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		refused := errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "invalid_refresh_token" || re.ErrorCode == "token_revoked" || re.ErrorCode == "token_expired")
		return s.refreshFailed(ctx, c, claim, tokenError(spec, "refresh the token", err), refused)
	}
	next := Credentials{AccessToken: tok.AccessToken, TokenType: "Bearer", RefreshToken: tok.RefreshToken, Expiry: tok.Expiry, ClientID: app.ClientID}
	if next.RefreshToken == "" {
		next.RefreshToken = creds.RefreshToken // not rotated: the old one stays good
	}
	if _, err := s.store.storeRefreshed(ctx, c.TenantID, c.ID, c.Version, claim, next, s.now()); err != nil {
		// The lease ran out and another process refreshed meanwhile: its credentials win.
		s.logger().ErrorContext(ctx, "store refreshed token", "connection", c.ID, "err", err)
		_, latest, oerr := s.store.Open(ctx, c.TenantID, c.ID)
		if oerr != nil {
			return Credentials{}, err
		}
		return latest, nil
	}
	return next, nil
}

// refreshFailed ends a failed refresh. A refresh token the provider refused marks the
// connection needs_reconnect, unless the store, read again, shows that another process
// rotated it meanwhile; any other failure is recorded and the connection stays as it
// is (a later call or pass retries). Either way an audit event says why.
func (s *Service) refreshFailed(ctx context.Context, c *Connection, claim string, cause error, refused bool) (Credentials, error) {
	msg := switchboard.AsError(cause).Message
	if err := s.store.releaseRefresh(ctx, c.TenantID, c.ID, claim, msg); err != nil {
		s.logger().ErrorContext(ctx, "release refresh lease", "connection", c.ID, "err", err)
	}
	s.recordSystem(c.TenantID, audit.KindConnectionRefreshFailed, c.ID, switchboard.CodeOf(cause), c.Provider+" "+c.AccountLabel+": "+msg)
	if !refused {
		s.logger().WarnContext(ctx, "token refresh failed", "connection", c.ID, "provider", c.Provider, "reason", msg)
		return Credentials{}, cause
	}
	latest, creds, err := s.store.Open(ctx, c.TenantID, c.ID)
	if err != nil {
		return Credentials{}, err
	}
	if latest.Version != c.Version && latest.Status != StatusNeedsReconnect && !(refreshKind{window: 0}).due(&latest, &creds, s.now()) {
		// Another node rotated the token between our read and our refresh: use its result.
		return creds, nil
	}
	marked, err := s.store.markRefreshFailed(ctx, c.TenantID, c.ID, latest.Version, StatusNeedsReconnect, msg)
	if err == nil {
		s.recordSystem(c.TenantID, audit.KindConnectionNeedsReconnect, c.ID, "", c.Provider+" "+c.AccountLabel+": the refresh token was refused")
		s.notify(ctx, events.ConnectionStatus, c.TenantID, c.ID)
		c = &marked
	}
	return Credentials{}, reconnectError(c)
}

// localCause is the error of a refresh this node cannot do for a reason of its own
// (its configuration, its keyring): never a reason to mark the connection; a node that
// can, refreshes it.
func localCause(what string) error {
	return &switchboard.Error{Code: switchboard.CodeUnavailable, Message: "this node " + what + "; another node refreshes the token (operator: give every node the same settings and keys)"}
}

// recordSystem audits what the hub did by itself (a refresh), not for a principal.
func (s *Service) recordSystem(tenant switchboard.TenantID, kind audit.Kind, connectionID string, code switchboard.Code, detail string) {
	if s.rec == nil {
		return
	}
	outcome := "ok"
	if code != "" {
		outcome = string(code)
	}
	if len(detail) > 500 {
		detail = detail[:500]
	}
	s.rec.Record(audit.Event{TenantID: tenant, Kind: kind, Principal: "system:refresh", ConnectionID: connectionID, Outcome: outcome, Detail: detail})
}

// outcome is a refresh's metric label: ok, or the error's code (reconnect when the
// provider refused the refresh token).
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return string(switchboard.CodeOf(err))
}

func reconnectError(c *Connection) error {
	return &switchboard.Error{Code: switchboard.CodeReconnect, Message: fmt.Sprintf("the %s connection %q needs to be reconnected: its authorization was refused or revoked", c.Provider, c.AccountLabel)}
}
