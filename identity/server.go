package identity

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/keyring"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/tenants"
)

// The authorization server's endpoints, under the deployment's public URL.
const (
	AuthorizePath = "/oauth/authorize"
	TokenPath     = "/oauth/token"
	// RegistrationPath is where MCP clients register (RFC 7591).
	RegistrationPath = "/oauth/register"
	// ServerMetadataPath is the RFC 8414 metadata; OpenIDConfigurationPath serves the
	// same document for clients that look for OpenID discovery.
	ServerMetadataPath      = "/.well-known/oauth-authorization-server"
	OpenIDConfigurationPath = "/.well-known/openid-configuration"
)

// Lifetimes of what the server issues.
const (
	// AccessTokenLifetime is short: a revoked grant is refused at once anyway, and a
	// client refreshes without bothering the person.
	AccessTokenLifetime = time.Hour
	// RefreshTokenLifetime is how long an unused refresh token lasts; each use
	// replaces it with a new one.
	RefreshTokenLifetime = 30 * 24 * time.Hour
	// CodeLifetime is how long an authorization code waits for its exchange.
	CodeLifetime = time.Minute
)

// Sessions is what the consent step needs of the UI's sign-in: who a session cookie
// stands for, and the session's anti-forgery token.
type Sessions interface {
	Session(ctx context.Context, sessionToken string) (switchboard.Principal, error)
	CSRFToken(sessionToken string) string
}

// GrantableAgents says whether a person may let an MCP client act as an agent: the
// same rule as creating an API key for it.
type GrantableAgents interface {
	// AgentForGrant returns the agent's name and the user it acts for, or an error
	// (not found, forbidden) when p may not hand it out.
	AgentForGrant(ctx context.Context, p switchboard.Principal, agentID string) (name, actsFor string, err error)
	// AgentsForGrant lists the agents p may hand out, for the consent page's choice at
	// the workspace URL.
	AgentsForGrant(ctx context.Context, p switchboard.Principal) ([]AgentChoice, error)
}

// AgentChoice is an agent the consent page offers.
type AgentChoice struct {
	ID, Name string
}

// Options configure a Server.
type Options struct {
	DB *gorm.DB
	// Keyring seals the access token signing keys.
	Keyring keyring.Keyring
	// PublicURL is where clients reach this deployment, without a trailing slash: the
	// issuer, and the base of every MCP URL (resource).
	PublicURL string
	Sessions  Sessions
	Agents    GrantableAgents
	// Fetch is the transport client metadata documents are fetched with: the SSRF
	// guard's (egress.Guard.Transport). Without it such clients are refused.
	Fetch  http.RoundTripper
	Logger *slog.Logger
	// Registrations limits dynamic client registrations per client address: the
	// fleet's shared limits (limits.Redis), or this node's alone (a limits.Local when
	// nil). RegistrationRate is their shape (DefaultRegistrationRate when zero).
	Registrations    limits.Upstream
	RegistrationRate limits.Rate
	// Accounts is the tenants store single sign-on signs people in with; without it
	// single sign-on is refused.
	Accounts *tenants.Store
	// Audit takes the audit events of single sign-on (sign-ins, settings changes); with
	// an audit.Writer a sign-in's row is durable (Commit) before the browser gets its
	// session.
	Audit audit.Recorder
	// OIDCTransport is how the tenants' OpenID providers are reached
	// (http.DefaultTransport when nil).
	OIDCTransport http.RoundTripper
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Server is Switchboard's OAuth 2.1 authorization server for its MCP URLs: metadata
// (RFC 8414), dynamic registration (RFC 7591), authorization code with PKCE S256 only,
// the resource parameter (RFC 8707) bound into every token, JWT access tokens (RFC
// 9068) accepted only at their MCP URL, and rotating refresh tokens stored hashed.
//
// It is built on go-jose and the standard library rather than an OAuth server
// framework: zitadel's op accepts plain PKCE, ignores resource, requires a scope, has
// no dynamic registration and keeps opaque tokens it cannot store hashed, so every
// security-relevant decision would have been ours in its hooks anyway.
type Server struct {
	o    Options
	keys *signingKeys

	grants  grantCache
	docs    clientDocuments
	feed    events.Bus
	hooksMu sync.Mutex
	hooks   []func(tenant switchboard.TenantID, grantIDs []string)

	regLimit limits.Upstream
	regRate  limits.Rate
	ssoRate  limits.Rate // single sign-ons started per client address
	oidc     providers
}

// New returns a Server.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	s := &Server{o: o, keys: newSigningKeys(o.DB, o.Keyring), grants: grantCache{entries: map[string]grantEntry{}},
		docs: clientDocuments{entries: map[string]clientDocument{}}, regLimit: o.Registrations, regRate: o.RegistrationRate,
		ssoRate: ssoStartRate}
	if s.regLimit == nil {
		s.regLimit = limits.NewLocal()
	}
	if s.regRate.PerSecond <= 0 {
		s.regRate = DefaultRegistrationRate
	}
	return s
}

// Issuer is the server's issuer identifier: the public URL.
func (s *Server) Issuer() string { return s.o.PublicURL }

func (s *Server) now() time.Time { return s.o.Now() }
