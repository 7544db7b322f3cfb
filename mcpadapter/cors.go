package mcpadapter

import (
	"net/http"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/httpx"
)

// corsMethods are the methods a browser may send to an MCP URL.
const corsMethods = "GET, POST, DELETE, OPTIONS"

// cors lets browser clients on the origins listed in AllowedOrigins call the MCP URL
// from another site: every answer to such an origin, refusals and the 401 whose
// WWW-Authenticate starts OAuth included, carries Access-Control-Allow-Origin and
// exposes the MCP headers, and its preflight is answered with 204. Any other origin
// gets no CORS headers, and its preflight is refused with 403, so the browser never
// sends the request. It reports whether it answered the request.
func (a *Adapter) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	listed := a.originListed(origin)
	if listed {
		httpx.AllowOrigin(w.Header(), origin)
	} else {
		w.Header().Add("Vary", "Origin")
	}
	if !httpx.IsPreflight(r) {
		return false
	}
	if !listed {
		writeError(w, &switchboard.Error{Code: switchboard.CodeForbidden, Message: "the Origin " + quoteShort(origin) +
			" is not in SWITCHBOARD_ALLOWED_ORIGINS, so browsers may not call this MCP URL from it; the operator can add it there (comma-separated origins, scheme://host[:port])"})
		return true
	}
	httpx.AnswerPreflight(w, origin, corsMethods)
	return true
}

// originListed reports whether AllowedOrigins names the origin, or allows any ("*").
// The deployment's own origin needs no CORS, and loopback origins that the
// rebinding check lets through on a loopback listener are not listed by that.
func (a *Adapter) originListed(origin string) bool {
	norm, ok := normalizeOrigin(origin)
	if !ok {
		return false
	}
	for _, allowed := range a.opts.AllowedOrigins {
		if allowed == "*" || allowed == norm {
			return true
		}
	}
	return false
}
