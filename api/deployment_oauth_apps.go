package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard/connections"
)

// listDeploymentOAuthApps lists, for the operator, every provider that connects with
// OAuth through an app and the deployment's app of each (never a secret).
func (s *server) listDeploymentOAuthApps(c *gin.Context) {
	p, err := asOperator(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	apps, err := s.Connections.DeploymentOAuthApps(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"oauth_apps": apps, "redirect_uri": s.PublicURL + CallbackPath})
}

// putDeploymentOAuthApp sets the deployment's OAuth app for a provider (the operator
// only): every tenant without its own app connects the provider with it.
func (s *server) putDeploymentOAuthApp(c *gin.Context) {
	p, err := asOperator(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req putOAuthAppRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	info, err := s.Connections.SetDeploymentOAuthApp(c.Request.Context(), p, connections.OAuthAppInput{Provider: c.Param("provider"), ClientID: req.ClientID, ClientSecret: req.ClientSecret})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, info)
}

// deleteDeploymentOAuthApp removes the deployment's OAuth app the operator set for a
// provider.
func (s *server) deleteDeploymentOAuthApp(c *gin.Context) {
	p, err := asOperator(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.Connections.DeleteDeploymentOAuthApp(c.Request.Context(), p, c.Param("provider")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
