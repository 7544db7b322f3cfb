package identity

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

	"github.com/switchboard-hub/switchboard/tenants"
)

// Agents says whether an agent URL names an agent.
type Agents interface {
	// AgentExists reports whether the tenant the slug names has the agent; an agent of
	// another tenant, or a tenant that does not exist, is false.
	AgentExists(ctx context.Context, tenantSlug, agentID string) (bool, error)
}

// ResourceMetadata is an RFC 9728 protected resource metadata document.
type ResourceMetadata struct {
	Resource string `json:"resource"`
	// AuthorizationServers names Switchboard's own authorization server (its issuer).
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
}

// MetadataHandler serves the protected resource metadata of every MCP URL at
// MetadataPath + /mcp/{tenant} and MetadataPath + /mcp/{tenant}/agents/{agent}.
//
// A tenant URL's document is served for every well-formed tenant slug, whether or not
// that tenant exists: the MCP URL itself answers a caller without a valid key the same
// 401 for every tenant, and the metadata must not become an oracle for which tenants a
// deployment hosts. An agent URL's document is served only when the tenant has that
// agent (404 otherwise, also for another tenant's agent): agent IDs are random, so only
// someone given the agent URL can ask about it, and they already know its tenant.
type MetadataHandler struct {
	// PublicURL is where clients reach this deployment, without a trailing slash.
	PublicURL string
	// AuthorizationServer is the issuer of the server that issues tokens for the MCP
	// URLs (Server.Issuer); empty names none.
	AuthorizationServer string
	// Agents serves agent URLs; without it there are none (as at the MCP adapter).
	Agents Agents
	Logger *slog.Logger
}

// ServeHTTP answers GET (and HEAD) with the document, and CORS preflights so browser
// clients can read it: the document is public and no credentials are involved.
func (h *MetadataHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		w.Header().Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
		w.Header().Set("Access-Control-Allow-Headers", "*")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method_not_allowed", "error_description": "use GET"})
		return
	}
	slug, agentID, ok := resourceOf(r.URL.Path)
	if !ok || !tenants.ValidSlug(slug) {
		notFound(w)
		return
	}
	doc := ResourceMetadata{
		Resource:               ResourceURL(h.PublicURL, slug, agentID),
		ScopesSupported:        []string{ScopeMCP},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Switchboard MCP URL of workspace " + slug,
	}
	if h.AuthorizationServer != "" {
		doc.AuthorizationServers = []string{h.AuthorizationServer}
	}
	if agentID != "" {
		if h.Agents == nil {
			notFound(w)
			return
		}
		found, err := h.Agents.AgentExists(r.Context(), slug, agentID)
		if err != nil {
			h.logger().ErrorContext(r.Context(), "protected resource metadata: look up agent", "err", err)
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error", "error_description": "internal error"})
			return
		}
		if !found {
			notFound(w)
			return
		}
		doc.ResourceName = "Switchboard MCP URL of an agent of workspace " + slug
	}
	writeJSON(w, http.StatusOK, doc)
}

func (h *MetadataHandler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.Default()
	}
	return h.Logger
}

// resourceOf splits a metadata path into the MCP URL's tenant slug and agent ID.
func resourceOf(path string) (slug, agentID string, ok bool) {
	rest, found := strings.CutPrefix(path, MetadataPath)
	if !found {
		return "", "", false
	}
	return ParseResourcePath(rest)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "error_description": "no MCP URL has this metadata"})
}

// writeJSON writes v as JSON without escaping <, > and &: clients such as mcp-remote
// print an error body as it is, and a person must read "Bearer <key>" there.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
