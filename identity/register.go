package identity

import "net/http"

// RegistrationPath is where an MCP client registers itself (RFC 7591) when the
// authorization server metadata names no registration endpoint: the MCP
// specification's fallback, which clients take when a resource names no
// authorization server, as Switchboard's do until its authorization server exists.
const RegistrationPath = "/register"

// noRegistration is what a client that tries to register gets while Switchboard offers
// no OAuth sign-in: 404, with an RFC 7591 style error whose description the client
// shows, so the person reads what to do rather than a bare "404 page not found".
const noRegistration = "this Switchboard does not offer OAuth sign-in for MCP clients yet, so there is nothing to register: " +
	"connect with an API key sent as the header Authorization: Bearer <key> (create one in Switchboard under Settings, API keys); " +
	"if you sent one, the MCP URL refused it as an invalid or revoked API key"

// NoRegistration answers client registration attempts while there is no
// authorization server.
func NoRegistration(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusNotFound, map[string]string{"error": "invalid_request", "error_description": noRegistration})
}
