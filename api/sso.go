package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/identity"
)

// SSO is the tenants' single sign-on for people (identity.Server): Settings' Single
// sign-on section, for the tenant's owners: the settings, the changes each owner has
// not acknowledged yet, and the links of people to the identity provider.
type SSO interface {
	SSO(ctx context.Context, p switchboard.Principal) (identity.SSOSettings, error)
	SetSSO(ctx context.Context, p switchboard.Principal, in identity.SSOInput) (identity.SSOSettings, error)
	DeleteSSO(ctx context.Context, p switchboard.Principal) error
	SSOChanges(ctx context.Context, p switchboard.Principal) ([]identity.SSOChange, error)
	AcknowledgeSSOChange(ctx context.Context, p switchboard.Principal, id string) error
	SSOLinks(ctx context.Context, p switchboard.Principal) ([]identity.SSOLink, error)
	ApproveSSOLink(ctx context.Context, p switchboard.Principal, id string) (identity.SSOLink, error)
}

// ssoOwner returns the tenant owner asking: single sign-on decides who signs in as
// whom, so only owners, in person, read or change it. It refuses too in a deployment
// wired without single sign-on.
func (s *server) ssoOwner(c *gin.Context) (switchboard.Principal, error) {
	p, err := asOwner(c, "single sign-on is managed by a tenant owner, with their own key or session: admins, members and agent keys may not read or change it")
	if err != nil {
		return p, err
	}
	if s.SSO == nil {
		return p, switchboard.Errorf(switchboard.CodeUnavailable, "single sign-on is not enabled in this deployment")
	}
	return p, nil
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
	p, err := s.ssoOwner(c)
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
	p, err := s.ssoOwner(c)
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
	p, err := s.ssoOwner(c)
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

// listSSOChanges answers the changes of single sign-on the owner asking has not
// acknowledged, newest first: the notice the UI shows on every page.
func (s *server) listSSOChanges(c *gin.Context) {
	p, err := s.ssoOwner(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	out, err := s.SSO.SSOChanges(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"changes": out})
}

// acknowledgeSSOChange records that the owner asking has seen a change of single
// sign-on; the other owners still see it until they acknowledge it too.
func (s *server) acknowledgeSSOChange(c *gin.Context) {
	p, err := s.ssoOwner(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.SSO.AcknowledgeSSOChange(c.Request.Context(), p, c.Param("id")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// listSSOLinks answers the links of the tenant's people to its identity provider, and
// the pending ones: owners' and admins' refused sign-ins, which an owner may approve.
func (s *server) listSSOLinks(c *gin.Context) {
	p, err := s.ssoOwner(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	out, err := s.SSO.SSOLinks(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"links": out})
}

// approveSSOLink links a person's account to the identity provider account their
// refused sign-in asserted.
func (s *server) approveSSOLink(c *gin.Context) {
	p, err := s.ssoOwner(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	out, err := s.SSO.ApproveSSOLink(c.Request.Context(), p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
