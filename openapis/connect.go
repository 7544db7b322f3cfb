package openapis

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
)

// ConnectInput connects p's account of a tenant's API with a credential: an API key, a
// bearer token or user:password, as the API's description says.
type ConnectInput struct {
	Token  string
	Label  *string
	Shared bool
}

// Has reports whether p's tenant has an API of that name (so POST /api/connections
// connects it here).
func (s *Service) Has(ctx context.Context, p switchboard.Principal, name string) (bool, error) {
	if p.TenantID == "" || !providerName(name) {
		return false, nil
	}
	_, err := s.store.get(ctx, p.TenantID, name)
	switch switchboard.CodeOf(err) {
	case "":
		return true, nil
	case switchboard.CodeNotFound:
		return false, nil
	}
	return false, err
}

// providerName is a cheap check before a store read: API names are snake_case.
func providerName(name string) bool {
	return name != "" && len(name) <= 32 && strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// Connect stores p's (a user's) connection to the tenant's API of that name with the
// credential, sealed like every connection's. An arbitrary API has no standard "who am
// I", so the first call proves the credential. A missing credential is an invalid
// "token" error saying what to paste.
func (s *Service) Connect(ctx context.Context, p switchboard.Principal, name string, in ConnectInput) (connections.Connection, error) {
	if p.Kind != switchboard.PrincipalUser {
		return connections.Connection{}, switchboard.Errorf(switchboard.CodeForbidden, "only a user can connect an account")
	}
	b, err := s.build(ctx, p.TenantID, name, "")
	if switchboard.CodeOf(err) == switchboard.CodeNotFound {
		return connections.Connection{}, switchboard.Invalid("provider", fmt.Sprintf("the tenant has no API named %q", name))
	}
	if err != nil {
		return connections.Connection{}, err
	}
	if b.flow != nil && b.flow.clientCredentials && b.app {
		return s.connectClientCredentials(ctx, p, name, in)
	}
	if !slices.Contains(b.spec.AuthKinds, providers.AuthAPIKey) {
		return connections.Connection{}, switchboard.Invalid("provider", b.spec.Title+" does not accept API tokens")
	}
	token := strings.TrimSpace(in.Token)
	if token == "" {
		return connections.Connection{}, switchboard.Invalid("token", "is required: "+b.spec.TokenHelp)
	}
	label := b.spec.Title
	if in.Label != nil {
		label = strings.TrimSpace(*in.Label)
		if label == "" || utf8.RuneCountInString(label) > 255 {
			return connections.Connection{}, switchboard.Invalid("label", "must be 1 to 255 characters")
		}
	}
	c := connections.Connection{
		Provider: Provider, AuthKind: providers.AuthAPIKey, AccountID: switchboard.NewID("acct"), AccountLabel: label,
		Meta: map[string]string{metaAPI: name, metaAPIID: b.id}, Shared: in.Shared, Status: connections.StatusActive,
	}
	return s.conns.CreateExternal(ctx, p, c, connections.Credentials{AccessToken: token, TokenType: "Bearer"})
}
