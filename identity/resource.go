package identity

import (
	"net/url"
	"strings"
)

// MetadataPath is the RFC 9728 well-known path prefix of protected resource metadata;
// a resource's own document is at this path followed by the resource's path.
const MetadataPath = "/.well-known/oauth-protected-resource"

// ScopeMCP is the one scope an MCP URL knows: using the tools that URL exposes. What a
// token reaches is decided by the URL (resource) it was issued for, not by scopes.
const ScopeMCP = "mcp"

// mcpPrefix is the path under which the MCP URLs live (mcpadapter.Prefix; this package
// sits below mcpadapter and cannot import it).
const mcpPrefix = "/mcp/"

// ResourcePath is the path of an MCP URL: /mcp/{tenant}, or /mcp/{tenant}/agents/{agent}
// when agentID is not empty. Both parts are escaped, so the path names exactly them.
func ResourcePath(slug, agentID string) string {
	p := mcpPrefix + url.PathEscape(slug)
	if agentID != "" {
		p += "/agents/" + url.PathEscape(agentID)
	}
	return p
}

// ParseResourcePath is the inverse of ResourcePath: it splits an MCP URL's path as
// net/url decodes it (/mcp/{tenant} or /mcp/{tenant}/agents/{agent}) into the tenant
// slug and, at an agent URL, the agent ID. ok is false for any other path.
func ParseResourcePath(path string) (slug, agentID string, ok bool) {
	rest, found := strings.CutPrefix(path, mcpPrefix)
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 1 && parts[0] != "":
		return parts[0], "", true
	case len(parts) == 3 && parts[0] != "" && parts[1] == "agents" && parts[2] != "":
		return parts[0], parts[2], true
	}
	return "", "", false
}

// ResourceURL is the MCP URL of a tenant (agentID "") or of one of its agents, as the
// deployment's public URL (no trailing slash) names it. It is the resource identifier
// the metadata names and, later, the RFC 8707 resource a token is bound to.
func ResourceURL(publicURL, slug, agentID string) string {
	return strings.TrimRight(publicURL, "/") + ResourcePath(slug, agentID)
}

// MetadataURL is where the protected resource metadata of an MCP URL is, per RFC 9728
// section 3.1: the well-known path inserted between the public URL's host and the
// resource's path (including any path the public URL itself has).
func MetadataURL(publicURL, slug, agentID string) string {
	resource := ResourceURL(publicURL, slug, agentID)
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		// A public URL without a host (only in tests): a path on this server.
		return MetadataPath + ResourcePath(slug, agentID)
	}
	return u.Scheme + "://" + u.Host + MetadataPath + u.EscapedPath()
}

// Challenge is the WWW-Authenticate value of a 401 at an MCP URL (RFC 6750 section 3,
// with RFC 9728's resource_metadata and the MCP specification's scope). problem is
// empty when the request carried no credentials, and otherwise says in plain words why
// the token was refused ("invalid or revoked API key"); it becomes error="invalid_token"
// with that error_description.
func Challenge(publicURL, slug, agentID, problem string) string {
	var b strings.Builder
	b.WriteString(`Bearer realm="switchboard", resource_metadata="`)
	b.WriteString(quotable(MetadataURL(publicURL, slug, agentID)))
	b.WriteString(`", scope="` + ScopeMCP + `"`)
	if problem != "" {
		b.WriteString(`, error="invalid_token", error_description="`)
		b.WriteString(quotable(problem))
		b.WriteString(`"`)
	}
	return b.String()
}

// quotable makes s safe inside an RFC 6750 quoted string, which allows printable ASCII
// except the double quote and backslash: anything else becomes a space.
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return ' '
		}
		return r
	}, s)
}
