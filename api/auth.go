package api

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/limits"
	"github.com/switchboard-hub/switchboard/tenants"
)

// SessionCookie names the cookie that holds a browser's session token (set by the web
// pages when someone signs in).
const SessionCookie = tenants.SessionCookie

// CSRFHeader carries a browser session's anti-forgery token on requests that change
// something.
const CSRFHeader = "X-CSRF-Token"

// authenticate turns the bearer API key, or the browser's session cookie, into the
// principal and puts it in the request's context; without either nothing under /api
// runs. A request with a session cookie that changes something must also carry the
// session's CSRF token in the X-CSRF-Token header.
func (s *server) authenticate(c *gin.Context) {
	if c.GetHeader("Authorization") == "" {
		if cookie, err := c.Request.Cookie(SessionCookie); err == nil && cookie.Value != "" {
			s.authenticateSession(c, cookie.Value)
			return
		}
	}
	key, ok := bearer(c.GetHeader("Authorization"))
	if !ok {
		limits.CloseUnread(c.Writer, c.Request)
		c.Header("WWW-Authenticate", `Bearer realm="switchboard"`)
		s.fail(c, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "send an API key as Authorization: Bearer <key>"})
		return
	}
	p, err := s.Tenants.Authenticate(c.Request.Context(), key)
	if err != nil {
		limits.CloseUnread(c.Writer, c.Request)
		c.Header("WWW-Authenticate", `Bearer realm="switchboard", error="invalid_token"`)
		if code := switchboard.CodeOf(err); code == switchboard.CodeInternal || code == switchboard.CodeRateLimited {
			s.fail(c, err)
			return
		}
		s.fail(c, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "the API key is not valid: it is unknown or revoked"})
		return
	}
	c.Request = c.Request.WithContext(switchboard.WithPrincipal(c.Request.Context(), p))
	c.Next()
}

// authenticateSession is authenticate for a browser signed in to the UI.
func (s *server) authenticateSession(c *gin.Context, token string) {
	p, err := s.Tenants.AuthenticateSession(c.Request.Context(), token)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeInternal {
			s.fail(c, err)
			return
		}
		s.fail(c, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "your session ended; sign in again"})
		return
	}
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		want := tenants.CSRFToken(token)
		if subtle.ConstantTimeCompare([]byte(c.GetHeader(CSRFHeader)), []byte(want)) != 1 {
			s.fail(c, switchboard.Errorf(switchboard.CodeForbidden, "the request lacks this session's CSRF token (header %s); reload the page and try again", CSRFHeader))
			return
		}
	}
	c.Request = c.Request.WithContext(switchboard.WithPrincipal(c.Request.Context(), p))
	c.Next()
}

func bearer(h string) (string, bool) {
	scheme, key, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(key) == "" {
		return "", false
	}
	return strings.TrimSpace(key), true
}

// principal returns who is asking. Every handler calls it first; the middleware has
// set it, so a missing one is a wiring fault and is refused.
func principal(c *gin.Context) (switchboard.Principal, error) {
	p, ok := switchboard.PrincipalFrom(c.Request.Context())
	if !ok || p.TenantID == "" {
		return switchboard.Principal{}, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "send an API key as Authorization: Bearer <key>"}
	}
	return p, nil
}

// asUser is principal for endpoints that manage the tenant: agents' keys may call
// tools, not administer users and keys.
func asUser(c *gin.Context) (switchboard.Principal, error) {
	return asUserTo(c, "manage the tenant")
}

// asUserTo is asUser for an endpoint whose refusal of an agent's key says what the
// key cannot do ("manage workflows"). An agent's key never acts as a person, whatever
// its creator's role.
func asUserTo(c *gin.Context, what string) (switchboard.Principal, error) {
	p, err := principal(c)
	if err != nil {
		return p, err
	}
	if p.Kind != switchboard.PrincipalUser {
		return p, switchboard.AgentForbidden(what)
	}
	return p, nil
}

// asAdmin is asUser for tenant administrators (owner or admin).
func asAdmin(c *gin.Context) (switchboard.Principal, error) {
	p, err := asUser(c)
	if err != nil {
		return p, err
	}
	if !p.IsAdmin() {
		return p, switchboard.Errorf(switchboard.CodeForbidden, "this needs an admin of the workspace (role owner or admin)")
	}
	return p, nil
}

// asOwner is asUser for the tenant's owners; why is the refusal's message.
func asOwner(c *gin.Context, why string) (switchboard.Principal, error) {
	p, err := asUser(c)
	if err != nil {
		return p, err
	}
	if p.Role != switchboard.RoleOwner {
		return p, switchboard.Errorf(switchboard.CodeForbidden, "%s", why)
	}
	return p, nil
}

// asOperator is asUser for the deployment's operator, who manages tenants.
func asOperator(c *gin.Context) (switchboard.Principal, error) {
	p, err := asUser(c)
	if err != nil {
		return p, err
	}
	if !p.Operator {
		return p, switchboard.Errorf(switchboard.CodeForbidden, "this needs the operator's API key")
	}
	return p, nil
}
