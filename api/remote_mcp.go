package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
)

// RemoteMCP registers remote MCP servers as connections (remotemcp.Service).
type RemoteMCP interface {
	Register(ctx context.Context, p switchboard.Principal, in remotemcp.RegisterInput) (remotemcp.Registered, error)
}

// remoteMCPView is a registered server: its connection and the tools it brought.
type remoteMCPView struct {
	Connection connectionView `json:"connection"`
	Tools      []string       `json:"tools"`
}

// registerRemoteMCP registers a remote MCP server for the caller. Listing and deleting
// go through /api/connections, where it is a connection of provider "mcp". With auth
// "oauth" the answer is the authorization URL to send the browser to (and the cookie
// the hub's /oauth/callback requires), as for POST /api/connections/{provider}/authorize.
func (s *server) registerRemoteMCP(c *gin.Context) {
	p, err := asUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if s.RemoteMCP == nil {
		s.fail(c, switchboard.Errorf(switchboard.CodeUnavailable, "remote MCP servers are not enabled on this server"))
		return
	}
	var req remotemcp.RegisterInput
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	reg, err := s.RemoteMCP.Register(c.Request.Context(), p, req)
	if err != nil {
		s.fail(c, err)
		return
	}
	if a := reg.Authorization; a != nil {
		http.SetCookie(c.Writer, &http.Cookie{
			Name: a.CookieName, Value: a.CookieValue, Path: a.CookiePath, Expires: a.ExpiresAt,
			MaxAge: int(time.Until(a.ExpiresAt).Seconds()), HttpOnly: true, Secure: a.CookieSecure, SameSite: http.SameSiteLaxMode,
		})
		c.Header("Cache-Control", "no-store")
		c.JSON(http.StatusOK, authorizeResponse{AuthorizationURL: a.URL, ExpiresAt: a.ExpiresAt})
		return
	}
	c.JSON(http.StatusCreated, remoteMCPView{Connection: s.viewConnection(*reg.Connection), Tools: reg.Tools})
}
