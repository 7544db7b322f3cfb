// Package providers is the provider SDK: a provider is a Spec with typed operations;
// the Registry reflects their schemas once and names them as tools; Call carries what
// an operation needs to reach its upstream through the shared HTTP client kit.
//
// Start from [Spec] (a provider), [Operation] (a typed operation, an [Op] to the
// [Registry]), [Registry] (which names them as [Tool]s) and [Call]; an upstream's
// refusal is an [UpstreamError], and [JSONRequest] sends one request through the client
// kit.
package providers

import (
	"context"
	"net/http"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// AuthKind is how a connection authenticates to its provider.
type AuthKind string

// The auth kinds.
const (
	AuthOAuth2 AuthKind = "oauth2"
	AuthAPIKey AuthKind = "api_key"
	// AuthNone is a connection that sends no credential (a public remote MCP server).
	AuthNone AuthKind = "none"
	// AuthClientCredentials is a connection that gets its tokens with its own OAuth
	// client's credentials (the client_credentials grant).
	AuthClientCredentials AuthKind = "client_credentials"
)

// RateLimit is the token bucket every connection of a provider gets.
type RateLimit struct {
	PerSecond float64 // sustained requests per second
	Burst     int     // requests allowed at once
	// MaxWait is how long a call may wait for the bucket or for an upstream
	// rate-limit window before it fails with rate_limited and a retry-after.
	MaxWait time.Duration
}

// Account is what a credential belongs to upstream, found by Spec.Verify.
type Account struct {
	ID     string   // the upstream's stable identifier (GitHub user id, Slack team id + user id)
	Label  string   // what a person recognises: GitHub login, Slack team name
	Scopes []string // the scopes the credential carries, where the upstream says
	// Meta is non-secret data the provider's operations need for this account, kept on
	// the connection and handed back in Call.Meta (Jira: the Atlassian cloud id).
	Meta map[string]string
	// Unknown is set when the upstream does not say whose credential it is (ID is then
	// made up): a connection is reconnected with it as the person chooses.
	Unknown bool
}

// OAuth2 describes a provider's OAuth 2.0 authorization-code flow. The OAuth app's
// client id and secret come from configuration or the tenant, never from the Spec.
type OAuth2 struct {
	AuthURL  string // authorization endpoint, absolute
	TokenURL string // token endpoint, absolute
	// Scopes are requested by default; UserScopes are Slack's user-token scopes, sent as user_scope.
	Scopes     []string
	UserScopes []string
	// ScopeSeparator joins scopes in the authorization URL; "" means a space.
	ScopeSeparator string
	PKCE           bool              // the provider accepts PKCE S256
	AuthParams     map[string]string // extra authorization-URL parameters
	// BasicAuth sends the OAuth app's client id and secret to the token endpoint as
	// HTTP Basic auth (client_secret_basic), for providers that take no other way
	// (Notion); otherwise they go in the form body (client_secret_post).
	BasicAuth bool
	// TokenResponse, when set, rewrites the token endpoint's JSON answer into the
	// standard shape of RFC 6749 section 5.1 (access_token, token_type, refresh_token,
	// expires_in, or error), keeping the other fields: Slack nests a user token under
	// authed_user and reports failures as 200 with "ok": false.
	TokenResponse func(body []byte) ([]byte, error)
	// TokenMeta, when set, picks the non-secret account data to keep on the connection
	// from the token endpoint's (rewritten) answer: Slack's team.
	// extra returns a field of the answer, as x/oauth2's Token.Extra does.
	TokenMeta func(extra func(key string) any) map[string]string
	// Revoke, when set, revokes a token at the provider. It answers nil when the token
	// is revoked or was already invalid, and an error the person can read otherwise.
	Revoke func(ctx context.Context, r RevokeRequest) error
}

// RevokeRequest is what Spec.OAuth.Revoke needs: a client without credentials on the
// provider's shared transport, the API base URL, the OAuth app, and the token.
type RevokeRequest struct {
	HTTP         *http.Client
	BaseURL      string
	ClientID     string
	ClientSecret string
	AccessToken  string
}

// Spec describes one provider: how to reach and authenticate to it, its limits, and
// its operations.
type Spec struct {
	Name        string // lower-case, the tool name prefix: "slack", "github"
	Title       string
	Description string
	DocsURL     string
	BaseURL     string // default API base URL, without a trailing slash; a deployment may override it
	// BaseURLHelp says what a deployment's own base URL looks like, for errors that
	// suspect it: "for GitHub Enterprise Server, https://HOST/api/v3".
	BaseURLHelp string
	AuthKinds   []AuthKind
	// OAuth is set for providers that support the OAuth connect flow.
	OAuth *OAuth2
	// TokenHelp tells a person which token to paste for an api_key connection: short
	// steps, one a line, with the real addresses to open (the UI numbers the steps and
	// links the https:// addresses).
	TokenHelp string
	// CheckToken, when set, checks the form of a token a person pastes, before it is
	// verified or stored (a credential of several parts, pasted as one): its error is
	// an invalid "token" error saying what the token must look like.
	CheckToken func(token string) error
	RateLimit  RateLimit
	// Deadlines bound each operation's upstream work (read-only ones and the others
	// apart); zero fields take DefaultReadDeadline and DefaultWriteDeadline.
	Deadlines Deadlines
	// Headers are set on every request to the provider (Accept, API version).
	Headers map[string]string
	// AuthHeader, when set, builds the header that carries the access token, in place
	// of the default "Authorization: Bearer <token>": Linear takes its personal API keys
	// bare ("Authorization: lin_api_…") and its OAuth tokens as Bearer.
	AuthHeader func(accessToken string) (name, value string)
	// Authorize, when set, puts the credential on each request in place of AuthHeader
	// and the default: an API key in a query parameter or a cookie, HTTP basic auth
	// from a "user:password" credential (an OpenAPI description's securitySchemes).
	Authorize func(r *http.Request, accessToken string)
	// SameOriginRedirects lets a connection's credentials follow the provider's
	// redirects to the origin (scheme, host and port) of the request redirected, as
	// GitHub's moved repositories ask; without it such a redirect is answered as it is.
	// A redirect to another origin never carries them (see egress.CheckRedirect).
	SameOriginRedirects bool
	// Catalog marks an API of the built-in catalog, made from a public API description
	// and a preset: ready to connect, listed beside the curated providers. Logo is its
	// icon, an SVG document, or "".
	Catalog bool
	Logo    string
	// Verify checks the credential the Call carries and returns the account it belongs to.
	Verify func(ctx context.Context, c *Call) (Account, error)
	// Operations are the provider's operations; each becomes the tool Name_opname.
	Operations []Op
	// Tools, when set, makes the provider's tools exist per connection (a remote MCP
	// server's, an imported OpenAPI description's): it lists a connection's tools, named
	// as callers see them (see NewConnectionTool). Such a provider has no Operations, and
	// its connections are made by its own registration, not by Verify.
	Tools func(ctx context.Context, c Connection) ([]*Tool, error)
	// OwnNames says the provider's operations are named as their tools are, without
	// the provider's name before them (the hub's own tools: switchboard_get_run,
	// run_workflow).
	OwnNames bool
	// Connectionless says the provider's tools run without a connection or credentials
	// (the hub's own tools, saved workflows): the router checks that the principal may
	// see them and their confirm policy, and runs them with the principal in the Call.
	Connectionless bool
	// ConfirmsItself says the provider's tools ask the person themselves, for what they
	// will change, when the principal's confirm policy covers it (a workflow asks once
	// for all its steps): the policy does not cover the call of the tool itself.
	ConfirmsItself bool
	// Ambient says the provider's tools belong to every caller's set of tools, an
	// agent's included without selecting them: each acts only within what the caller
	// may already do (its own runs, the workflows whose steps it may call). Only a
	// connectionless provider is ambient.
	Ambient bool
	// TenantTools, when set on a connectionless provider, lists the tools each tenant
	// has of it (a tenant's saved workflows), named as callers see them (see
	// NewConnectionTool, with this Spec as their provider).
	TenantTools func(ctx context.Context, tenant switchboard.TenantID) ([]*Tool, error)
	// ConnectionOAuth, when set, is the provider's OAuth flow and token refresh whose
	// authorization server is each connection's (see ConnectionOAuth), in place of OAuth.
	ConnectionOAuth *ConnectionOAuth
}
