package mcp

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
)

// Provider is the connection provider of remote MCP servers.
const Provider = "mcp"

// The transports a remote MCP server may speak.
const (
	TransportStreamable = "streamable" // Streamable HTTP
	TransportSSE        = "sse"        // the legacy HTTP+SSE transport
)

// The ways a remote MCP server may authenticate the hub.
const (
	AuthNone              = "none"
	AuthBearer            = "bearer"
	AuthClientCredentials = "client_credentials"
	AuthOAuth             = "oauth" // authorization code, per the MCP authorization spec
)

// The connection meta keys of a remote MCP server.
const (
	metaURL        = "url"
	metaTransport  = "transport"
	metaName       = "name"
	metaAuth       = "auth"
	metaTokenURL   = "token_url"
	metaAuthMethod = "token_endpoint_auth_method"
	metaResource   = "resource"
)

// namePattern is what a remote server's name may be: it prefixes its tools' names.
var namePattern = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// maxNameLen leaves a tool name room after the prefix within MCP's 64 characters.
const maxNameLen = 32

// RegisterInput registers a remote MCP server for the caller's tenant.
type RegisterInput struct {
	// Name prefixes the server's tools (name_tool): snake_case, unique in the tenant.
	Name string `json:"name"`
	// URL is the server's MCP endpoint (Streamable HTTP) or SSE endpoint.
	URL string `json:"url"`
	// Transport is "streamable" (the default) or "sse".
	Transport string `json:"transport"`
	// Auth is "none" (the default), "bearer", "client_credentials" or "oauth".
	Auth string `json:"auth"`
	// Token is the bearer token (auth bearer).
	Token string `json:"token,omitempty"`
	// ClientID and ClientSecret are the hub's OAuth client at the server's
	// authorization server: required for client_credentials; for oauth, optional (the
	// hub registers a client dynamically when the server's authorization server lets it).
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	// TokenURL is the token endpoint for client_credentials.
	TokenURL string `json:"token_url,omitempty"`
	// Scopes are requested with client_credentials and oauth.
	Scopes []string `json:"scopes,omitempty"`
	// Shared lets every user of the tenant use the server; else only its owner.
	Shared bool `json:"shared"`
}

// normalize trims the input and fills in the defaults.
func (in *RegisterInput) normalize() {
	in.Name = strings.TrimSpace(in.Name)
	in.URL = strings.TrimSpace(in.URL)
	in.Transport = strings.ToLower(strings.TrimSpace(in.Transport))
	in.Auth = strings.ToLower(strings.TrimSpace(in.Auth))
	in.Token = strings.TrimSpace(in.Token)
	in.ClientID = strings.TrimSpace(in.ClientID)
	in.TokenURL = strings.TrimSpace(in.TokenURL)
	if in.Transport == "" {
		in.Transport = TransportStreamable
	}
	if in.Auth == "" {
		in.Auth = AuthNone
	}
}

// validate checks the input without reaching the network; the error names the field.
func (in *RegisterInput) validate() error {
	switch {
	case in.Name == "":
		return switchboard.Invalid("name", "is required")
	case len(in.Name) > maxNameLen || !namePattern.MatchString(in.Name):
		return switchboard.Invalid("name", fmt.Sprintf("must be snake_case (lower-case letters, digits and single underscores, starting with a letter), at most %d characters: it prefixes the server's tool names", maxNameLen))
	}
	if _, err := checkURL("url", in.URL); err != nil {
		return err
	}
	if in.Transport != TransportStreamable && in.Transport != TransportSSE {
		return switchboard.Invalid("transport", fmt.Sprintf("must be %q or %q", TransportStreamable, TransportSSE))
	}
	switch in.Auth {
	case AuthNone:
	case AuthBearer:
		if in.Token == "" {
			return switchboard.Invalid("token", "is required with auth bearer")
		}
	case AuthClientCredentials:
		switch {
		case in.ClientID == "":
			return switchboard.Invalid("client_id", "is required with auth client_credentials")
		case in.ClientSecret == "":
			return switchboard.Invalid("client_secret", "is required with auth client_credentials")
		case in.TokenURL == "":
			return switchboard.Invalid("token_url", "is required with auth client_credentials")
		}
		if _, err := checkURL("token_url", in.TokenURL); err != nil {
			return err
		}
	case AuthOAuth:
		if in.ClientSecret != "" && in.ClientID == "" {
			return switchboard.Invalid("client_id", "is required with a client_secret")
		}
	default:
		return switchboard.Invalid("auth", fmt.Sprintf("must be one of %q, %q, %q or %q", AuthNone, AuthBearer, AuthClientCredentials, AuthOAuth))
	}
	for _, s := range in.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			return switchboard.Invalid("scopes", fmt.Sprintf("%q is not a scope token", s))
		}
	}
	return nil
}

// checkURL parses an http(s) URL with a host and no user info or fragment.
func checkURL(field, raw string) (*url.URL, error) {
	if raw == "" {
		return nil, switchboard.Invalid(field, "is required")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, switchboard.Invalid(field, "is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, switchboard.Invalid(field, "must be an http or https URL")
	case u.Hostname() == "":
		return nil, switchboard.Invalid(field, "has no host")
	case u.User != nil:
		return nil, switchboard.Invalid(field, "must not carry a user name or password; use auth instead")
	case u.Fragment != "":
		return nil, switchboard.Invalid(field, "must not have a fragment")
	}
	return u, nil
}

// authKind is the connection auth kind of an auth method.
func authKind(auth string) providers.AuthKind {
	switch auth {
	case AuthBearer:
		return providers.AuthAPIKey
	case AuthClientCredentials:
		return providers.AuthClientCredentials
	case AuthOAuth:
		return providers.AuthOAuth2
	default:
		return providers.AuthNone
	}
}

// Spec is the provider of remote MCP server connections, as the router sees it: its
// name and the rate limit each connection gets.
func Spec() *providers.Spec {
	return &providers.Spec{
		Name:        Provider,
		Title:       "Remote MCP server",
		Description: "A remote MCP server a tenant registered; its tools are named after the server.",
		AuthKinds:   []providers.AuthKind{providers.AuthNone, providers.AuthAPIKey, providers.AuthClientCredentials, providers.AuthOAuth2},
		RateLimit:   providers.RateLimit{PerSecond: 10, Burst: 20},
	}
}

// toolName is the hub's name of a remote tool: the server's name, an underscore and
// the remote name with every character outside [a-zA-Z0-9_-] replaced by an
// underscore, cut to 64 characters.
func toolName(server, remote string) string {
	var b strings.Builder
	b.WriteString(server)
	b.WriteByte('_')
	for _, r := range remote {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// checkName refuses a server name that would name its tools like another's: like the
// hub's (a built-in provider's name, or switchboard…), or like another remote server's
// of the tenant, whoever owns it (equal names, or one the other followed by "_": docs
// and docs_v2 would both name a tool docs_v2_search). Tool names stay unique across the
// tenant, so no server can shadow another's tools in anyone's list.
func (s *Service) checkName(ctx context.Context, p switchboard.Principal, name string) error {
	if with, reserved := s.reg.ReservedPrefix(name); reserved {
		if with == providers.HubToolPrefix {
			return switchboard.Invalid("name", fmt.Sprintf("must not start with %q, which the hub's own tools use", providers.HubToolPrefix))
		}
		return switchboard.Invalid("name", fmt.Sprintf("%q would name its tools like the built-in provider %s's (%s_…); pick another name", name, with, with))
	}
	if s.names != nil {
		if err := s.names(ctx, p, name); err != nil {
			return err
		}
	}
	names, err := s.conns.AccountIDs(ctx, p, Provider)
	if err != nil {
		return err
	}
	for _, other := range names {
		if name == other {
			return &switchboard.Error{Code: switchboard.CodeConflict, Field: "name", Message: fmt.Sprintf("%q is the name of another remote MCP server of the tenant; pick another", name)}
		}
		if strings.HasPrefix(name, other+"_") || strings.HasPrefix(other, name+"_") {
			short := name
			if len(other) < len(name) {
				short = other
			}
			return &switchboard.Error{Code: switchboard.CodeConflict, Field: "name", Message: fmt.Sprintf(
				"%q clashes with the tenant's remote MCP server %q: a tool named %s_… could belong to either; pick another name", name, other, short)}
		}
	}
	return nil
}

// Endpoint is what a remote MCP server's connection says of the server: where it is,
// how the hub talks to it, and how it authenticates (none, bearer, client_credentials
// or oauth). None of it is secret.
type Endpoint struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
	Auth      string `json:"auth"`
}

// EndpointOf returns the endpoint of a remote MCP server connection; ok is false for
// a connection of another provider.
func EndpointOf(c connections.Connection) (Endpoint, bool) {
	if c.Provider != Provider {
		return Endpoint{}, false
	}
	return Endpoint{URL: c.Meta[metaURL], Transport: c.Meta[metaTransport], Auth: c.Meta[metaAuth]}, true
}
