package api

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/httpx"
	"github.com/switchboard-hub/switchboard/limits"
)

// defaultCSP is the Content-Security-Policy of answers that set none of their own:
// nothing loads, and no site may frame them. The UI's pages and the OAuth result page
// (callbackCSP) replace it with theirs.
const defaultCSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// hstsMaxAge is how long browsers keep to https once they saw the header (a year).
const hstsMaxAge = "max-age=31536000"

// securityHeaders sets on every answer the headers that keep a page from being framed
// or sniffed as another type, a restrictive default CSP, and, when the public URL is
// https, HSTS. A handler may replace the CSP with its own (the UI's pages do).
func (s *server) securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", defaultCSP)
	if s.https {
		h.Set("Strict-Transport-Security", hstsMaxAge)
	}
	c.Next()
}

// checkHost refuses a request whose Host is not the public URL's host, so that a DNS
// name rebound to this server cannot reach the API or the UI with a user's cookies. On
// a loopback listener a loopback Host (localhost, 127.0.0.1, [::1]) is also accepted,
// for local development and a proxy on the same machine. Without a public URL nothing
// is checked.
func (s *server) checkHost(c *gin.Context) {
	if !s.hostAllowed(c.Request) {
		s.refuseHost(c)
		return
	}
	c.Next()
}

// hostAllowed reports whether the request's Host is one checkHost lets through.
func (s *server) hostAllowed(r *http.Request) bool {
	return s.publicHost == "" || sameHost(r.Host, s.publicHost) || (httpx.OnLoopback(r) && httpx.IsLoopbackHost(r.Host))
}

// refuseHost answers a request under a Host that is not this server's (421).
func (s *server) refuseHost(c *gin.Context) {
	host := c.Request.Host
	if len(host) > 100 {
		host = host[:100] + "…"
	}
	c.AbortWithStatusJSON(http.StatusMisdirectedRequest, errorBody{Error: errorDetail{Code: switchboard.CodeInvalid, Field: "Host",
		Message: "this server answers as " + s.publicHost + " (its public URL, SWITCHBOARD_PUBLIC_URL); the Host header " + strings.ToValidUTF8(host, "?") + " is not it"}})
}

// requireJSON refuses a request body that does not say it is JSON (415): a form or
// text/plain body is what a cross-site page can send without a CORS preflight.
func requireJSON(c *gin.Context) {
	r := c.Request
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		c.Next()
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && (mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))) {
		c.Next()
		return
	}
	c.AbortWithStatusJSON(http.StatusUnsupportedMediaType, errorBody{Error: errorDetail{Code: switchboard.CodeInvalid, Field: "Content-Type",
		Message: "send the body as JSON with Content-Type: application/json"}})
}

// bodyBudget reserves the request body's bytes from the process's budget for as long
// as the request is served, and refuses the request with 503 (or 429 when its client
// address holds its share) and Retry-After when the budget cannot hold it now. It runs
// after the caller is authenticated, and lifts the read deadline publicBody set.
func (s *server) bodyBudget(c *gin.Context) {
	release, err := s.BodyBudget.Reserve(c.Writer, c.Request)
	if err != nil {
		s.fail(c, err)
		return
	}
	defer release()
	limits.LiftBodyDeadline(c.Writer)
	c.Next()
}

// publicBody bounds the body of every request whose route does not check credentials
// first and reserve its body then (s.ownBodies): such a body may hold at most
// limits.PublicBodyPerRequest bytes (a longer one is refused with 413 before a byte is
// read), counts in the budget's public pool of forms, and must arrive within
// BodyTimeout. A route that checks credentials first has that deadline until it has
// (so a refused caller's body, which the server reads before it answers, cannot hold
// the connection either); it lifts it then (limits.LiftBodyDeadline).
func (s *server) publicBody(c *gin.Context) {
	route := c.FullPath()
	for _, p := range s.ownBodies {
		if route != "" && strings.HasPrefix(route, p) {
			limits.BodyDeadline(c.Writer, c.Request, s.BodyTimeout)
			c.Next()
			return
		}
	}
	release, err := s.reservePublic(c, "forms", limits.PublicBodyPerRequest)
	if err != nil {
		s.failBody(c, err)
		return
	}
	defer release()
	c.Next()
}

// reservePublic gives a body read before any credential is checked BodyTimeout to
// arrive (a refused one too: the server reads what is left of a small body before it
// answers) and reserves it, of at most limit bytes, in the budget's public pool of
// that name.
func (s *server) reservePublic(c *gin.Context, pool string, limit int64) (release func(), err error) {
	limits.BodyDeadline(c.Writer, c.Request, s.BodyTimeout)
	return s.BodyBudget.ReservePublic(c.Writer, c.Request, pool, limit)
}

// failBody answers a body's refusal: 413 for one declared longer than its route takes,
// else as fail does.
func (s *server) failBody(c *gin.Context, err error) {
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		limits.CloseUnread(c.Writer, c.Request)
		c.AbortWithStatusJSON(http.StatusRequestEntityTooLarge, errorBody{Error: errorDetail{Code: switchboard.CodeInvalid, Field: "body",
			Message: fmt.Sprintf("is %d bytes; this URL takes at most %d", c.Request.ContentLength, tooLarge.Limit)}})
		return
	}
	s.fail(c, err)
}

// hostOf returns the host[:port] of a public URL as browsers send it in Host (lower
// case, without the scheme's default port), and whether it is https.
func hostOf(publicURL string) (string, bool) {
	u, err := url.Parse(publicURL)
	if err != nil || u.Host == "" {
		return "", false
	}
	return normalHost(u.Host, u.Scheme), u.Scheme == "https"
}

// normalHost lower-cases a host[:port] and drops the scheme's default port.
func normalHost(host, scheme string) string {
	host = strings.ToLower(host)
	if (scheme == "http" && strings.HasSuffix(host, ":80")) || (scheme == "https" && strings.HasSuffix(host, ":443")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	return host
}

// sameHost reports whether a request's Host names the public host (a default port
// written out or not).
func sameHost(host, public string) bool {
	host = strings.ToLower(host)
	return host == public || normalHost(host, "http") == public || normalHost(host, "https") == public
}
