package remotemcp

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// sameOrigin reports whether two URLs share an origin: scheme, host and port (the
// scheme's default port when none is given). Credentials go only to the origin they
// were registered for; Go's http.Client keeps its own Authorization header across a
// redirect to another port of the same host, or to a subdomain, which is not enough.
func sameOrigin(a, b *url.URL) bool {
	return a != nil && b != nil && strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) && portOf(a) == portOf(b)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// errCrossOriginRedirect stops a request that carries a body (a token request with the
// client's secret, a code or a refresh token) from following a redirect to another
// origin, where 307 and 308 would send the body again.
var errCrossOriginRedirect = errors.New("the server redirected a request with credentials to another origin; not followed")

// checkRedirect is the redirect policy of the hub's OAuth requests: at most 10 hops; a
// hop to another origin than the first request's drops the Authorization header, and
// a request with a body does not follow one at all.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	first := via[0]
	if sameOrigin(first.URL, req.URL) {
		return nil
	}
	if first.Method != http.MethodGet && first.Method != http.MethodHead {
		return errCrossOriginRedirect
	}
	req.Header.Del("Authorization")
	return nil
}
