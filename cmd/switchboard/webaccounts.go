package main

import (
	"context"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/tenants"
	"github.com/switchboard-hub/switchboard/web"
)

// webAccounts lets the web pages sign people in with the tenant store.
type webAccounts struct{ store *tenants.Store }

var _ web.Accounts = webAccounts{}

func (a webAccounts) SignIn(ctx context.Context, tenantSlug, email, password string) (string, error) {
	token, _, err := a.store.SignIn(ctx, tenantSlug, email, password)
	return token, err
}

func (a webAccounts) SignOut(ctx context.Context, token string) error {
	return a.store.SignOut(ctx, token)
}

func (a webAccounts) Session(ctx context.Context, token string) (switchboard.Principal, error) {
	return a.store.AuthenticateSession(ctx, token)
}

func (a webAccounts) CSRFToken(token string) string { return tenants.CSRFToken(token) }

func (a webAccounts) Email(ctx context.Context, p switchboard.Principal) (string, error) {
	u, err := a.store.User(ctx, p.TenantID, p.UserID)
	return u.Email, err
}

func (a webAccounts) Link(ctx context.Context, token string) (web.Link, error) {
	l, err := a.store.Link(ctx, token)
	if err != nil {
		return web.Link{}, err
	}
	return web.Link{TenantSlug: l.TenantSlug, TenantName: l.TenantName, Email: l.Email, NewUser: l.NewUser}, nil
}

func (a webAccounts) UseLink(ctx context.Context, token, password string) (string, error) {
	session, _, _, err := a.store.UseLink(ctx, token, password)
	return session, err
}
