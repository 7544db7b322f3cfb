package providers

import (
	"context"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// Credentials are a connection's secrets once opened: the connections store keeps them
// sealed and hands them only to what calls the provider. They never leave the process.
type Credentials struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// ClientID is the OAuth app that issued an OAuth token: refreshes and revocations
	// must go through the same app.
	ClientID string `json:"client_id,omitempty"`
	// ClientSecret is the connection's own OAuth client secret, where the connection
	// has a client of its own (a remote MCP server's client credentials or dynamically
	// registered client); "" for the deployment's and tenants' apps.
	ClientSecret string `json:"client_secret,omitempty"`
}

// ConnectionOAuth is the OAuth authorization code flow and token refresh of a provider
// whose authorization server is found per connection: a remote MCP server's (through
// its protected resource metadata), a tenant's API's (from its description). The
// connections service keeps the flow's state like any other flow's (hashed, single
// use, bound to the browser and the user) and stores and refreshes the connection's
// tokens like any other's (sealed, single-flight across processes); the provider does
// the talking to its authorization server.
type ConnectionOAuth struct {
	// Finish exchanges the code of a callback and returns the connection to store with
	// its credentials.
	Finish func(ctx context.Context, cb OAuthCallback) (NewConnection, Credentials, error)
	// Refresh returns the connection's credentials refreshed (with their refresh token,
	// or the connection's own client for client credentials). An error with code
	// reconnect or invalid says the grant was refused.
	Refresh func(ctx context.Context, c Connection, creds Credentials) (Credentials, error)
}

// OAuthCallback is what ConnectionOAuth.Finish gets: who started the flow, the code, the
// redirect URI the code was issued for, and what the provider kept for the flow when it
// started it (sealed with the flow's state).
type OAuthCallback struct {
	Tenant      switchboard.TenantID
	UserID      string
	Code        string
	RedirectURI string
	Extra       []byte
}

// NewConnection is the connection a finished flow makes: the account and the
// non-secret data its tools need. The connections service sets the provider, owner and
// sharing.
type NewConnection struct {
	AuthKind     AuthKind
	AccountID    string
	AccountLabel string
	Scopes       []string
	Meta         map[string]string
}
