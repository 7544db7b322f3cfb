package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/identity"
)

// SSO is the tenants' single sign-on for people (identity.Server): Settings' Single
// sign-on section, for the tenant's admins.
type SSO interface {
	SSO(ctx context.Context, p switchboard.Principal) (identity.SSOSettings, error)
	SetSSO(ctx context.Context, p switchboard.Principal, in identity.SSOInput) (identity.SSOSettings, error)
	DeleteSSO(ctx context.Context, p switchboard.Principal) error
}

// ssoReady refuses the single sign-on routes of a deployment wired without it.
func (s *server) ssoReady() error {
	if s.SSO == nil {
		return switchboard.Errorf(switchboard.CodeUnavailable, "single sign-on is not enabled in this deployment")
	}
	return nil
}

// putSSORequest is a tenant's single sign-on. client_secret may be left out to keep
// the stored one.
type putSSORequest struct {
	Issuer            string   `json:"issuer"`
	ClientID          string   `json:"client_id"`
	ClientSecret      string   `json:"client_secret"`
	AllowedDomains    []string `json:"allowed_domains"`
	LocalPasswordsOff bool     `json:"local_passwords_off"`
}

// getSSO answers the tenant's single sign-on settings (never the client secret), with
// the redirect URI to register at the identity provider.
func (s *server) getSSO(c *gin.Context) {
	p, err := asAdmin(c)
	if err == nil {
		err = s.ssoReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	out, err := s.SSO.SSO(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// putSSO sets the tenant's single sign-on; the identity provider must answer OpenID
// discovery at the issuer.
func (s *server) putSSO(c *gin.Context) {
	p, err := asAdmin(c)
	if err == nil {
		err = s.ssoReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	var req putSSORequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	out, err := s.SSO.SetSSO(c.Request.Context(), p, identity.SSOInput{Issuer: req.Issuer, ClientID: req.ClientID, ClientSecret: req.ClientSecret,
		AllowedDomains: req.AllowedDomains, LocalPasswordsOff: req.LocalPasswordsOff})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// deleteSSO removes the tenant's single sign-on: passwords work again.
func (s *server) deleteSSO(c *gin.Context) {
	p, err := asAdmin(c)
	if err == nil {
		err = s.ssoReady()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.SSO.DeleteSSO(c.Request.Context(), p); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
