package egress

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SameOrigin reports whether two URLs share an origin: scheme, host and port (the
// scheme's default port when none is given). Credentials go only to the origin they
// were given for; Go's http.Client keeps its own Authorization header across a redirect
// to another port of the same host, or to a subdomain, and every other header
// everywhere, which is not enough.
func SameOrigin(a, b *url.URL) bool {
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

// ErrCrossOriginRedirect stops a request that carries a body (a token request with a
// client's secret, a code or a refresh token; a tool call's arguments) from following a
// redirect to another origin, where 307 and 308 would send the body again.
var ErrCrossOriginRedirect = errors.New("the server redirected a request with a body to another origin; not followed")

// maxRedirects is how many hops a client follows at most.
const maxRedirects = 10

// safeHeaders are the headers a hop to another origin keeps; every other one (a
// credential under any name: Authorization, Cookie, X-Api-Key, …) is dropped.
var safeHeaders = []string{"Accept", "Accept-Encoding", "Accept-Language", "Cache-Control", "Content-Type", "If-Match", "If-Modified-Since", "If-None-Match", "User-Agent"}

// CheckRedirect returns the redirect policy of a client that sends credentials:
//   - a hop to the first request's origin is followed, with the request's headers,
//     only when sameOrigin says the credentials may follow it; otherwise the redirect
//     is the answer;
//   - a hop to another origin is followed only by a request without a body (GET,
//     HEAD), with none of its headers but the safe ones, and never with a credential;
//     a request with a body fails with ErrCrossOriginRedirect;
//   - only http and https, and at most ten hops.
//
// A transport that adds credentials itself asks MayCarryCredentials for each hop.
func CheckRedirect(sameOrigin bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("a redirect to a %s: URL; not followed", req.URL.Scheme)
		}
		first := via[0]
		if SameOrigin(first.URL, req.URL) {
			if !sameOrigin {
				return http.ErrUseLastResponse
			}
			return nil
		}
		if first.Method != http.MethodGet && first.Method != http.MethodHead {
			return ErrCrossOriginRedirect
		}
		bare := make(http.Header, len(safeHeaders))
		for _, k := range safeHeaders {
			if v := req.Header.Values(k); len(v) > 0 {
				bare[k] = v
			}
		}
		req.Header = bare
		return nil
	}
}

// NoRedirect is the policy of a client that answers a redirect itself.
func NoRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// MayCarryCredentials reports whether a request may carry the credentials given for
// the origin its chain of redirects began at: the first request may; a hop only when
// it is at that same origin (and a client lets it through only when its policy allows
// that, see CheckRedirect).
func MayCarryCredentials(req *http.Request) bool {
	first := req
	for first.Response != nil && first.Response.Request != nil {
		first = first.Response.Request
	}
	return first == req || SameOrigin(first.URL, req.URL)
}

// Client returns a client over rt with the redirect policy of CheckRedirect and a
// timeout for the whole exchange (0: none beyond the request's context).
func Client(rt http.RoundTripper, timeout time.Duration, sameOrigin bool) *http.Client {
	return &http.Client{Transport: rt, Timeout: timeout, CheckRedirect: CheckRedirect(sameOrigin)}
}
