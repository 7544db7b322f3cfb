package connections

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/providers"
)

// ReconnectInput renews a connection's credentials with a new API token.
type ReconnectInput struct {
	Token string  `json:"token"`
	Label *string `json:"label,omitempty"` // a new label; nil keeps the connection's
}

// Reconnect gives the connection id a new API token in place: the same id, so every
// agent bound to it keeps its tools. p must be allowed to manage it (its owner or an
// admin), and the token must belong to the same account at the provider: a token of
// another account is refused (connect it as a new connection instead), because the
// agents bound to this one were set up for this account's data. Nothing changes
// when the provider refuses the token.
func (s *Service) Reconnect(ctx context.Context, p switchboard.Principal, id string, in ReconnectInput) (Connection, error) {
	existing, err := s.reconnectTarget(ctx, p, id, "")
	if err != nil {
		return Connection{}, err
	}
	spec, ok := s.reg.Provider(existing.Provider)
	if !ok || spec.PerConnection() {
		return Connection{}, switchboard.Invalid("connection_id", fmt.Sprintf("is a %q connection, which is not a catalog provider: it cannot be reconnected with a token here", existing.Provider))
	}
	if !slices.Contains(spec.AuthKinds, providers.AuthAPIKey) {
		return Connection{}, switchboard.Invalid("token", fmt.Sprintf("%s does not accept API tokens; reconnect it with OAuth", spec.Title))
	}
	token := strings.TrimSpace(in.Token)
	if token == "" {
		msg := "is required"
		if spec.TokenHelp != "" {
			msg += ": " + spec.TokenHelp
		}
		return Connection{}, switchboard.Invalid("token", msg)
	}
	if spec.CheckToken != nil {
		if err := spec.CheckToken(token); err != nil {
			return Connection{}, err
		}
	}
	label := existing.AccountLabel
	if in.Label != nil && strings.TrimSpace(*in.Label) != existing.AccountLabel {
		renamed := existing
		renamed.AccountLabel = *in.Label
		if err := s.checkLabel(ctx, p.TenantID, renamed); err != nil {
			return Connection{}, err
		}
		label = strings.TrimSpace(*in.Label)
	}
	acct, err := s.verify(ctx, p.TenantID, spec, token)
	if err != nil {
		s.record(p, audit.KindConnectionReconnected, existing.ID, switchboard.CodeOf(err), spec.Name)
		return Connection{}, err
	}
	if err := sameAccount(spec, existing, acct, "token"); err != nil {
		s.record(p, audit.KindConnectionReconnected, existing.ID, switchboard.CodeOf(err), spec.Name+": another account")
		return Connection{}, err
	}
	c, err := s.store.renew(ctx, p.TenantID, existing, Connection{
		AuthKind: providers.AuthAPIKey, AccountLabel: label, Scopes: scopes(acct.Scopes), Meta: acct.Meta,
	}, Credentials{AccessToken: token, TokenType: "Bearer"})
	if err != nil {
		return Connection{}, err
	}
	s.record(p, audit.KindConnectionReconnected, c.ID, "", spec.Name+" "+c.AccountLabel)
	s.notify(ctx, events.ConnectionChanged, p.TenantID, c.ID)
	return c, nil
}

// reconnectTarget returns the connection id that p asks to reconnect: one of p's
// tenant that p may see and manage, of provider when provider is set. Any other is
// an error naming the connection_id field.
func (s *Service) reconnectTarget(ctx context.Context, p switchboard.Principal, id, provider string) (Connection, error) {
	if p.Kind != switchboard.PrincipalUser {
		return Connection{}, switchboard.Errorf(switchboard.CodeForbidden, "only a user can reconnect an account")
	}
	c, err := s.Get(ctx, p, id)
	if err != nil {
		return Connection{}, err
	}
	if !mayManage(p, &c) {
		return Connection{}, switchboard.Errorf(switchboard.CodeForbidden, "only its owner or an admin can reconnect this connection")
	}
	if provider != "" && c.Provider != provider {
		return Connection{}, switchboard.Invalid("connection_id", fmt.Sprintf("is a %s connection, not %s", c.Provider, provider))
	}
	return c, nil
}

// sameAccount refuses credentials of another account than the connection's: a
// reconnect renews access to the same account, it never swaps whose data the bound
// agents reach.
func sameAccount(spec *providers.Spec, existing Connection, acct providers.Account, field string) error {
	if acct.ID == existing.AccountID || acct.Unknown {
		return nil
	}
	who := acct.Label
	if who == "" {
		who = acct.ID
	}
	return switchboard.Invalid(field, fmt.Sprintf("belongs to the %s account %s, but this connection is for %s; sign in as %s to reconnect it, or connect %s as a new connection",
		spec.Title, who, existing.AccountLabel, existing.AccountLabel, who))
}

// Existing reports which of ids name a connection of p's tenant (see Store.Existing).
func (s *Service) Existing(ctx context.Context, p switchboard.Principal, ids []string) (map[string]bool, error) {
	return s.store.Existing(ctx, p.TenantID, ids)
}
