package connections

import (
	"context"
	"errors"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/events"
	"github.com/switchboard-hub/switchboard/providers"
)

// Disconnected says what a disconnect did at the provider.
type Disconnected struct {
	// Revoked is true when the provider revoked the token (or already had).
	Revoked bool `json:"revoked"`
	// RevokeError says why the provider did not revoke it; the connection and its
	// credentials are deleted all the same.
	RevokeError string `json:"revoke_error,omitempty"`
	// Revocable is false for connections the provider has no revocation for (an API
	// token pasted by a person stays theirs to revoke).
	Revocable bool `json:"revocable"`
}

// Disconnect revokes an OAuth connection's token at the provider, where the provider
// has an endpoint for it (Slack auth.revoke, GitHub's grant deletion), then deletes the
// connection with its sealed credentials. A failed revocation is returned in
// Disconnected and audited, never hidden. Its owner and the tenant's admins may
// disconnect; others who can see it (a shared connection) are forbidden, and those who
// cannot get not_found.
func (s *Service) Disconnect(ctx context.Context, p switchboard.Principal, id string) (Disconnected, error) {
	c, err := s.Get(ctx, p, id)
	if err != nil {
		return Disconnected{}, err
	}
	if !mayManage(p, &c) {
		return Disconnected{}, switchboard.Errorf(switchboard.CodeForbidden, "only the connection's owner or a tenant admin may delete it")
	}
	var out Disconnected
	if spec, ok := s.reg.Provider(c.Provider); ok && c.AuthKind == providers.AuthOAuth2 && spec.OAuth != nil && spec.OAuth.Revoke != nil {
		out.Revocable = true
		if err := s.revoke(ctx, spec, &c); err != nil {
			out.RevokeError = s.revokeMessage(ctx, spec, c.ID, err)
			s.record(p, audit.KindConnectionRevokeFailed, c.ID, switchboard.CodeUpstream, c.Provider+" "+c.AccountLabel+": "+clip(out.RevokeError, 400))
		} else {
			out.Revoked = true
		}
	}
	if err := s.store.Delete(ctx, p.TenantID, id); err != nil {
		return Disconnected{}, err
	}
	s.record(p, audit.KindConnectionDeleted, c.ID, "", c.Provider+" "+c.AccountLabel)
	s.notify(ctx, events.ConnectionRemoved, p.TenantID, c.ID)
	return out, nil
}

// revoke asks the provider to revoke c's token with the app that issued it.
func (s *Service) revoke(ctx context.Context, spec *providers.Spec, c *Connection) error {
	_, creds, err := s.store.Open(ctx, c.TenantID, c.ID)
	if err != nil {
		return err
	}
	app, _, err := s.oauthApp(ctx, c.TenantID, spec)
	if err != nil {
		return switchboard.AsError(err)
	}
	if creds.ClientID != "" && creds.ClientID != app.ClientID {
		return switchboard.Invalid("provider", "the OAuth app that issued the token is no longer configured, so it cannot be revoked here; revoke it in your "+spec.Title+" settings")
	}
	rctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	defer cancel()
	return spec.OAuth.Revoke(rctx, providers.RevokeRequest{
		HTTP:         egress.Client(s.tr.For(spec.Name), exchangeTimeout, false),
		BaseURL:      strings.TrimRight(s.reg.BaseURL(spec.Name), "/"),
		ClientID:     app.ClientID,
		ClientSecret: app.ClientSecret,
		AccessToken:  creds.AccessToken,
	})
}

// revokeMessage is what the caller and the audit read of a failed revocation: the
// provider's refusal or the coded error's message, never an internal error's cause
// (which is logged instead).
func (s *Service) revokeMessage(ctx context.Context, spec *providers.Spec, id string, err error) string {
	var e *switchboard.Error
	if !errors.As(err, &e) {
		return err.Error() // the provider's own words (see providers.OAuth2.Revoke)
	}
	if e.Code == switchboard.CodeInternal {
		s.logger().ErrorContext(ctx, "revoke token", "connection", id, "provider", spec.Name, "err", err)
		return "Switchboard could not revoke the token (internal error); revoke it in your " + spec.Title + " settings"
	}
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
