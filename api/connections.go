package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/openapis"
	"github.com/switchboard-hub/switchboard/providers"
	remotemcp "github.com/switchboard-hub/switchboard/providers/mcp"
)

// connectionView is a connection as the API shows it: never its credentials.
type connectionView struct {
	ID           string             `json:"id"`
	Provider     string             `json:"provider"`
	AuthKind     providers.AuthKind `json:"auth_kind"`
	AccountID    string             `json:"account_id"`
	AccountLabel string             `json:"account_label"`
	Scopes       []string           `json:"scopes"`
	Shared       bool               `json:"shared"`
	OwnerUserID  string             `json:"owner_user_id"`
	// Owner is the owner's email, in lists, on a connection someone else owns (shared
	// with the caller, or seen by an admin).
	Owner       string             `json:"owner,omitempty"`
	Status      connections.Status `json:"status"`
	ExpiresAt   *time.Time         `json:"expires_at,omitempty"`
	RefreshedAt *time.Time         `json:"refreshed_at,omitempty"`
	LastUsedAt  *time.Time         `json:"last_used_at,omitempty"`
	// MissingScopes are scopes the provider's tools need that the connection was not
	// granted, and FailingTools the tools that will fail for want of them (both empty
	// when the connection reports no scopes).
	MissingScopes []string `json:"missing_scopes,omitempty"`
	// Remote is the server of a remote MCP server connection (provider "mcp").
	Remote       *remotemcp.Endpoint `json:"remote,omitempty"`
	FailingTools []string            `json:"failing_tools,omitempty"`
	// RateLimit is the token bucket the connection's calls are held to: its own, which
	// an admin set, or its provider's; absent when there is none (only the upstream's
	// announced windows apply).
	RateLimit *rateLimitView `json:"rate_limit,omitempty"`
	// LastRefreshError is why the last token refresh failed, until one succeeds.
	LastRefreshError string    `json:"last_refresh_error,omitempty"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

func (s *server) viewConnection(c connections.Connection) connectionView {
	v := connectionView{
		ID: c.ID, Provider: c.Provider, AuthKind: c.AuthKind, AccountID: c.AccountID,
		AccountLabel: c.AccountLabel, Scopes: strings.Fields(c.Scopes), Shared: c.Shared,
		OwnerUserID: c.OwnerUserID, Status: c.Status, ExpiresAt: c.ExpiresAt,
		RefreshedAt: c.RefreshedAt, LastRefreshError: c.LastRefreshError, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
	v.MissingScopes, v.FailingTools = s.scopeGaps(c.Provider, v.Scopes)
	v.RateLimit = s.rateLimitOf(c)
	if ep, ok := remotemcp.EndpointOf(c); ok {
		v.Remote = &ep
	}
	return v
}

// createConnectionRequest connects a provider account with a token.
type createConnectionRequest struct {
	Provider string  `json:"provider"`
	Token    string  `json:"token"`
	Shared   bool    `json:"shared"`
	Label    *string `json:"label"`
}

// createConnection checks the token against the provider and stores it sealed.
func (s *server) createConnection(c *gin.Context) {
	p, err := asUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req createConnectionRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if err := required([2]string{"provider", req.Provider}); err != nil {
		s.fail(c, err)
		return
	}
	var conn connections.Connection
	tenantAPI, err := s.tenantAPI(c, p, req.Provider)
	switch {
	case err != nil:
	case tenantAPI: // one of the tenant's APIs, added by its OpenAPI description (its client credentials need no token)
		conn, err = s.OpenAPI.Connect(c.Request.Context(), p, req.Provider, openapis.ConnectInput{Token: req.Token, Shared: req.Shared, Label: req.Label})
	default:
		if err = required([2]string{"token", req.Token}); err != nil {
			break
		}
		conn, err = s.Connections.Connect(c.Request.Context(), p, connections.ConnectInput{
			Provider: req.Provider, Token: req.Token, Shared: req.Shared, Label: req.Label,
		})
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, s.viewConnection(conn))
}

// reconnectRequest renews a connection's token in place.
type reconnectRequest struct {
	Token string  `json:"token"`
	Label *string `json:"label"`
}

// reconnectConnection gives a connection a new token of the same account, keeping its
// id, so the agents bound to it keep their tools.
func (s *server) reconnectConnection(c *gin.Context) {
	p, err := asUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req reconnectRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if err := required([2]string{"token", req.Token}); err != nil {
		s.fail(c, err)
		return
	}
	conn, err := s.Connections.Reconnect(c.Request.Context(), p, c.Param("id"), connections.ReconnectInput{Token: req.Token, Label: req.Label})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, s.viewConnection(conn))
}

func (s *server) listConnections(c *gin.Context) {
	p, err := asUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	list, err := s.Connections.List(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	ids := make([]string, 0, len(list))
	for _, conn := range list {
		ids = append(ids, conn.ID)
	}
	used := map[string]time.Time{}
	if s.Audit != nil {
		if used, err = s.Audit.LastUsed(c.Request.Context(), p.TenantID, ids); err != nil {
			s.fail(c, err)
			return
		}
	}
	owners, err := s.ownerNames(c.Request.Context(), p.TenantID)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]connectionView, 0, len(list))
	for _, conn := range list {
		v := s.viewConnection(conn)
		if at, ok := used[conn.ID]; ok {
			v.LastUsedAt = &at
		}
		if conn.OwnerUserID != p.UserID {
			v.Owner = owners[conn.OwnerUserID]
		}
		out = append(out, v)
	}
	c.JSON(http.StatusOK, gin.H{"connections": out})
}

func (s *server) getConnection(c *gin.Context) {
	p, err := asUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	conn, err := s.Connections.Get(c.Request.Context(), p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, s.viewConnection(conn))
}

func (s *server) deleteConnection(c *gin.Context) {
	p, err := asUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	d, err := s.Connections.Disconnect(c.Request.Context(), p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if d.Revocable && !d.Revoked {
		// Deleted here, but the provider still honours the token: say so.
		c.JSON(http.StatusOK, gin.H{"deleted": true, "revoked": false, "revoke_error": d.RevokeError})
		return
	}
	c.Status(http.StatusNoContent)
}

// rateLimitView is a connection's rate limit and where it comes from.
type rateLimitView struct {
	PerSecond float64 `json:"per_second"`
	Burst     int     `json:"burst"`
	// Source is "connection" for the connection's own, "provider" for its provider's.
	Source string `json:"source"`
}

func (s *server) rateLimitOf(c connections.Connection) *rateLimitView {
	if own, ok := c.OwnRateLimit(); ok {
		return &rateLimitView{PerSecond: own.PerSecond, Burst: own.Burst, Source: "connection"}
	}
	if s.Registry == nil {
		return nil
	}
	if spec, ok := s.Registry.Provider(c.Provider); ok && spec.RateLimit.PerSecond > 0 {
		return &rateLimitView{PerSecond: spec.RateLimit.PerSecond, Burst: max(spec.RateLimit.Burst, 1), Source: "provider"}
	}
	return nil
}

// updateConnectionRequest changes a connection's settings; only its rate limit today.
type updateConnectionRequest struct {
	// RateLimit is the connection's own rate limit; null gives it its provider's again.
	RateLimit json.RawMessage `json:"rate_limit"`
}

// updateConnection lets a tenant admin set a connection's own rate limit.
func (s *server) updateConnection(c *gin.Context) {
	p, err := asUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req updateConnectionRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	if len(req.RateLimit) == 0 {
		s.fail(c, switchboard.Invalid("rate_limit", "is required: an object with per_second and burst, or null for the provider's limit"))
		return
	}
	var rl *connections.RateLimit
	if string(req.RateLimit) != "null" {
		rl = &connections.RateLimit{}
		dec := json.NewDecoder(bytes.NewReader(req.RateLimit))
		dec.DisallowUnknownFields()
		if err := dec.Decode(rl); err != nil {
			s.fail(c, switchboard.Invalid("rate_limit", "must be an object with per_second (a number) and burst (a whole number), or null for the provider's limit"))
			return
		}
	}
	conn, err := s.Connections.SetRateLimit(c.Request.Context(), p, c.Param("id"), rl)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, s.viewConnection(conn))
}
