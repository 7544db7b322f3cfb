package mcpadapter

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/httpx"
)

// checkOrigin is the DNS rebinding protection the MCP transport specification asks
// for. A request whose Origin header names a site other than this deployment (its
// PublicURL) or one of the allowed origins is refused, before anything is read; so is
// a request that reached a loopback listener under a Host that is not a loopback name
// (a rebound DNS name) unless PublicURL or the allowed origins name that host.
// Requests without Origin (non-browser clients) pass the origin check.
func (a *Adapter) checkOrigin(r *http.Request) *switchboard.Error {
	if httpx.OnLoopback(r) && !httpx.IsLoopbackHost(r.Host) && !a.hostAllowed(r.Host) {
		return &switchboard.Error{Code: switchboard.CodeForbidden, Message: "requests to this server must name it by a loopback host (localhost, 127.0.0.1, [::1]) or its public URL; the Host header " + quoteShort(r.Host) + " is neither"}
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	if a.originAllowed(origin, r) {
		return nil
	}
	return &switchboard.Error{Code: switchboard.CodeForbidden, Message: "the Origin " + quoteShort(origin) + " may not call this MCP URL; the operator can allow it in SWITCHBOARD_ALLOWED_ORIGINS"}
}

// originAllowed reports whether a browser origin may call: the deployment's own, a
// configured one, or (on a loopback listener) a loopback origin.
func (a *Adapter) originAllowed(origin string, r *http.Request) bool {
	if a.originListed(origin) {
		return true
	}
	norm, ok := normalizeOrigin(origin)
	if !ok {
		return false
	}
	if own, ok := normalizeOrigin(a.opts.PublicURL); ok && own == norm {
		return true
	}
	if httpx.OnLoopback(r) {
		u, _ := url.Parse(norm)
		return httpx.IsLoopbackHost(u.Host)
	}
	return false
}

// hostAllowed reports whether a Host header names this deployment by its public URL
// or an allowed origin.
func (a *Adapter) hostAllowed(host string) bool {
	candidates := append([]string{a.opts.PublicURL}, a.opts.AllowedOrigins...)
	for _, c := range candidates {
		if c == "*" {
			continue
		}
		if u, err := url.Parse(c); err == nil && u.Host != "" && strings.EqualFold(u.Host, host) {
			return true
		}
	}
	return false
}

// NormalizeOrigin returns an origin as browsers send it (scheme://host[:port], lower
// case, no path), or false when s is not an http(s) origin.
func NormalizeOrigin(s string) (string, bool) { return normalizeOrigin(s) }

func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", false
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	host := strings.ToLower(u.Host)
	if (u.Scheme == "http" && strings.HasSuffix(host, ":80")) || (u.Scheme == "https" && strings.HasSuffix(host, ":443")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	return u.Scheme + "://" + host, true
}

func quoteShort(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
