package identity

import (
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboard-hub/switchboard/limits"
)

// DefaultRegistrationRate is how many dynamic client registrations one client address
// may make: 30 at once, then one a minute. A person's MCP client registers once per
// server; an office behind one address registers once per person.
var DefaultRegistrationRate = limits.Rate{PerSecond: 1.0 / 60, Burst: 30}

// registrationKey names a client address's registration bucket in the shared limits;
// the prefix keeps it apart from the connections' buckets.
func registrationKey(source string) string { return "oauth-register:" + source }

// registrationSource is the client address a registration counts against: the one
// limits.Sources found (behind trusted proxies), else the peer's address.
func registrationSource(r *http.Request) string {
	if s := limits.SourceFrom(r.Context()); s != "" {
		return s
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// allowRegistration takes one registration from the client address's bucket, or
// answers 429 with Retry-After (RFC 6585) and returns false.
func (s *Server) allowRegistration(w http.ResponseWriter, r *http.Request) bool {
	wait, ok := s.regLimit.Take(r.Context(), registrationKey(registrationSource(r)), s.regRate, 0)
	if ok {
		return true
	}
	secs := int64((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusTooManyRequests, map[string]string{
		"error":             "invalid_request",
		"error_description": "too many client registrations from your network; try again in " + strconv.FormatInt(max(secs, 1), 10) + " s",
	})
	return false
}
