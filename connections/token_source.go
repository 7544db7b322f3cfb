package connections

import (
	"context"
	"sync"

	"golang.org/x/oauth2"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// TokenSource returns the token source of a connection's HTTP client. A connection
// whose token cannot be renewed (see renewable) gets its token as it is; another gets a
// source that refreshes through the service (single-flight, persisted, the rotated
// refresh token stored with the new access token) when the token expires within
// OnDemandWindow. The source keeps no request's context: each refresh runs on the
// calling request's context without its cancellation, bounded by its own timeout.
func (s *Service) TokenSource(c Connection, creds Credentials) oauth2.TokenSource {
	tok := &oauth2.Token{AccessToken: creds.AccessToken, TokenType: creds.TokenType, Expiry: creds.Expiry}
	if !renewable(&c, &creds) {
		return oauth2.StaticTokenSource(tok)
	}
	return &tokenSource{svc: s, tenant: c.TenantID, id: c.ID, tok: tok}
}

// tokenSource is a connection's refreshing token source.
type tokenSource struct {
	svc    *Service
	tenant switchboard.TenantID
	id     string

	mu  sync.Mutex
	tok *oauth2.Token
}

// Token returns a token good for at least OnDemandWindow, refreshing it if needed.
func (t *tokenSource) Token() (*oauth2.Token, error) { return t.TokenContext(context.Background()) }

// TokenContext is Token on the request's context (without its cancellation: other
// calls may be waiting on the same refresh).
func (t *tokenSource) TokenContext(ctx context.Context) (*oauth2.Token, error) {
	t.mu.Lock()
	tok := t.tok
	t.mu.Unlock()
	now := t.svc.now()
	if tok.Expiry.IsZero() || tok.Expiry.After(now.Add(OnDemandWindow)) {
		return tok, nil
	}
	creds, err := t.svc.fresh(ctx, t.tenant, t.id, refreshKind{window: OnDemandWindow})
	if err != nil {
		if !tok.Expiry.Before(now) && switchboard.CodeOf(err) != switchboard.CodeReconnect {
			return tok, nil // still good for a while; the failure is recorded and retried
		}
		return nil, err
	}
	next := &oauth2.Token{AccessToken: creds.AccessToken, TokenType: creds.TokenType, Expiry: creds.Expiry}
	t.mu.Lock()
	t.tok = next
	t.mu.Unlock()
	return next, nil
}

// renewable reports whether a connection's token can be renewed: with its refresh
// token, or, for a client_credentials connection whose token expires, by asking its
// provider's per-connection OAuth for a new one (a tenant's API). A client_credentials
// connection that keeps no expiring token (a remote MCP server's, whose sessions ask
// for their own) is not.
func renewable(c *Connection, creds *Credentials) bool {
	return creds.RefreshToken != "" || (c.AuthKind == providers.AuthClientCredentials && !creds.Expiry.IsZero())
}
