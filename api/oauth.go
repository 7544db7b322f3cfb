package api

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/tenants"
)

// CallbackPath is where providers send the browser back after authorization; the
// redirect URI registered with every OAuth app is the public URL followed by it.
const CallbackPath = "/oauth/callback"

// authorizeRequest starts an OAuth connect flow; every field is optional.
type authorizeRequest struct {
	Shared bool    `json:"shared"`
	Label  *string `json:"label"`
	// ConnectionID names a connection to reconnect in place (same id, agents keep
	// their tools); the account signed in at the provider must be its account.
	ConnectionID string `json:"connection_id"`
}

// authorizeResponse is the provider's authorization URL to send the browser to.
type authorizeResponse struct {
	AuthorizationURL string    `json:"authorization_url"`
	ExpiresAt        time.Time `json:"expires_at"`
}

// authorize starts connecting a provider account with OAuth. The answer sets an
// HTTP-only SameSite=Lax cookie that the callback requires: the flow finishes only in
// the browser that started it, so a link started by one user cannot be completed by
// another (no connection lands under the wrong tenant).
func (s *server) authorize(c *gin.Context) {
	p, err := asUser(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req authorizeRequest
	if c.Request.ContentLength != 0 {
		if err := decode(c, &req); err != nil {
			s.fail(c, err)
			return
		}
	}
	var a connections.Authorization
	tenantAPI, err := s.tenantAPI(c, p, c.Param("id"))
	switch {
	case err != nil:
	case tenantAPI && req.ConnectionID != "":
		err = switchboard.Invalid("connection_id", "an API added by its description is reconnected by connecting it again")
	case tenantAPI: // one of the tenant's APIs, added by its OpenAPI description
		label := ""
		if req.Label != nil {
			label = *req.Label
		}
		a, err = s.OpenAPI.Authorize(c.Request.Context(), p, c.Param("id"), req.Shared, label)
	default:
		a, err = s.Connections.Authorize(c.Request.Context(), p, connections.AuthorizeInput{Provider: c.Param("id"), Shared: req.Shared, Label: req.Label, ConnectionID: req.ConnectionID})
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	http.SetCookie(c.Writer, &http.Cookie{
		Name: a.CookieName, Value: a.CookieValue, Path: a.CookiePath, Expires: a.ExpiresAt,
		MaxAge: int(time.Until(a.ExpiresAt).Seconds()), HttpOnly: true, Secure: a.CookieSecure, SameSite: http.SameSiteLaxMode,
	})
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, authorizeResponse{AuthorizationURL: a.URL, ExpiresAt: a.ExpiresAt})
}

// callbackPage is the page a browser sees at the end of a flow.
// It takes the UI's stylesheet, so it looks like the pages it was started from.
var callbackPage = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} · Switchboard</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/static/style.css">
{{- with .Return}}
<meta http-equiv="refresh" content="2;url={{.}}">
{{- end}}</head>
<body>
<header class="top"><a class="brand" href="{{.Back}}">Switchboard</a></header>
<main id="main" class="narrow">
<h1>{{.Title}}</h1>
<p{{if .Failed}} class="error"{{end}}>{{.Message}}</p>
<p><a href="{{.Back}}" class="button" id="oauth-back">Back to Switchboard</a></p>
</main>
</body></html>
`))

// callbackCSP lets the result page load the UI's stylesheet, and nothing else.
const callbackCSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

type callbackView struct {
	Title   string
	Message string
	Back    string
	// Return is where the browser goes on its own after a moment: the app's
	// Integrations page, which says what was connected.
	Return string
	Failed bool
}

// callback finishes a flow the provider redirected back. It answers JSON to clients
// that ask for it (Accept: application/json) and a page otherwise; failures name what
// went wrong and what to do, and store nothing. The browser must hold the flow's
// cookie; if the request also says who it is (an API key, or a UI session), that must
// be the user who started the flow.
func (s *server) callback(c *gin.Context) {
	q := c.Request.URL.Query()
	in := connections.CallbackInput{
		State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error"), ErrorDescription: q.Get("error_description"),
	}
	if ck, err := c.Request.Cookie(connections.OAuthCookieName(in.State)); err == nil {
		in.Browser = ck.Value
	}
	if key, ok := bearer(c.GetHeader("Authorization")); ok {
		p, err := s.Tenants.Authenticate(c.Request.Context(), key)
		if err != nil {
			s.callbackFailed(c, &switchboard.Error{Code: switchboard.CodeUnauthorized, Message: "the API key is not valid: it is unknown or revoked"})
			return
		}
		in.Principal = &p
	} else if ck, err := c.Request.Cookie(tenants.SessionCookie); err == nil && ck.Value != "" {
		// A browser signed in to the UI: it must be the user who started the flow.
		if p, err := s.Tenants.AuthenticateSession(c.Request.Context(), ck.Value); err == nil {
			in.Principal = &p
		}
	}
	c.Header("Cache-Control", "no-store")
	c.Header("Referrer-Policy", "no-referrer") // the URL holds the code and state
	conn, err := s.Connections.Callback(c.Request.Context(), in)
	// The cookie has served its purpose either way.
	http.SetCookie(c.Writer, &http.Cookie{Name: connections.OAuthCookieName(in.State), Value: "", Path: CallbackPath, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	if err != nil {
		s.callbackFailed(c, err)
		return
	}
	if wantsJSON(c) {
		c.JSON(http.StatusCreated, s.viewConnection(conn))
		return
	}
	// A connection the flow made is at version 1; one it renewed in place (the
	// owner's connection of the same account) is past it, and keeps its label.
	renewed := conn.Version > 1
	msg := "Your " + conn.Provider + " account " + conn.AccountLabel + " is connected. Its tools are available to your MCP clients now; taking you back to Switchboard."
	if renewed {
		msg = "Your " + conn.Provider + " account was already connected, as " + conn.AccountLabel + ": that connection was renewed in place with this sign-in, keeping its name and the agents that use it. Taking you back to Switchboard."
	}
	back := url.Values{"connected": {conn.ID}}
	if renewed {
		back.Set("renewed", "1")
	}
	s.callbackPage(c, http.StatusOK, callbackView{Title: "Connected", Message: msg, Return: s.PublicURL + "/?" + back.Encode() + "#connections"})
}

func (s *server) callbackFailed(c *gin.Context, err error) {
	if wantsJSON(c) {
		s.fail(c, err)
		return
	}
	e := switchboard.AsError(err)
	msg := e.Message
	if e.Code == switchboard.CodeInternal {
		s.log.ErrorContext(c.Request.Context(), "oauth callback failed", "err", err)
		msg = "internal error; try again, and tell the operator if it persists"
	}
	if e.Field != "" && e.Code == switchboard.CodeInvalid {
		msg = e.Field + " " + msg
	}
	s.callbackPage(c, e.Code.HTTPStatus(), callbackView{Title: "Not connected", Message: msg + " Nothing was connected.", Failed: true})
}

func (s *server) callbackPage(c *gin.Context, status int, v callbackView) {
	v.Back = s.PublicURL + "/#connections"
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Content-Security-Policy", callbackCSP)
	c.Status(status)
	if err := callbackPage.Execute(c.Writer, v); err != nil {
		s.log.ErrorContext(c.Request.Context(), "render oauth callback page", "err", err)
	}
	c.Abort()
}

// wantsJSON reports whether the client asked for JSON rather than a page.
func wantsJSON(c *gin.Context) bool {
	accept := c.GetHeader("Accept")
	return strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/html")
}

// putOAuthAppRequest is a tenant's own OAuth app for a provider.
type putOAuthAppRequest struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

func (s *server) putOAuthApp(c *gin.Context) {
	p, err := asAdmin(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req putOAuthAppRequest
	if err := decode(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	info, err := s.Connections.SetOAuthApp(c.Request.Context(), p, connections.OAuthAppInput{Provider: c.Param("provider"), ClientID: req.ClientID, ClientSecret: req.ClientSecret})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, info)
}

func (s *server) listOAuthApps(c *gin.Context) {
	p, err := asAdmin(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	apps, err := s.Connections.ListOAuthApps(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"oauth_apps": apps, "redirect_uri": s.PublicURL + CallbackPath})
}

func (s *server) deleteOAuthApp(c *gin.Context) {
	p, err := asAdmin(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.Connections.DeleteOAuthApp(c.Request.Context(), p, c.Param("provider")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
