package httpx

import "net/http"

// CORS for browser MCP clients. The MCP URLs and the OAuth endpoints a browser client
// calls allow the same request headers, so a client that passed one preflight passes
// the others.
const (
	// CORSAllowHeaders are the request headers a browser MCP client sends: its bearer
	// credential, the JSON-RPC body and what it accepts back, the session and protocol
	// version headers, and Last-Event-ID to resume a stream.
	CORSAllowHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"
	// CORSExposeHeaders are the response headers a browser client must read: the
	// session id initialize returns, the protocol version, and the OAuth challenge of
	// a 401 that points at the protected resource metadata.
	CORSExposeHeaders = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"
	// CORSMaxAge is how long (seconds) a browser may keep a preflight's answer: two
	// hours, the most Chromium keeps.
	CORSMaxAge = "7200"
)

// AllowOrigin lets origin ("*" for any) read the response and its exposed headers.
// Vary: Origin keeps a shared cache from serving one origin's answer to another.
func AllowOrigin(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", CORSExposeHeaders)
	if origin != "*" {
		h.Add("Vary", "Origin")
	}
}

// AnswerPreflight answers a CORS preflight with 204: origin may send methods (a
// comma-separated list) with the MCP request headers. No credentials are allowed:
// browser clients authenticate with a bearer header, never a cookie.
func AnswerPreflight(w http.ResponseWriter, origin, methods string) {
	AllowOrigin(w.Header(), origin)
	w.Header().Set("Access-Control-Allow-Methods", methods)
	w.Header().Set("Access-Control-Allow-Headers", CORSAllowHeaders)
	w.Header().Set("Access-Control-Max-Age", CORSMaxAge)
	w.WriteHeader(http.StatusNoContent)
}

// IsPreflight reports whether r is a CORS preflight (OPTIONS naming the method the
// browser means to send) rather than a plain OPTIONS request.
func IsPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}
