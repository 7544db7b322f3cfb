// Package identity is where Switchboard meets OAuth 2.1 clients of its MCP URLs. It
// publishes each MCP URL as an OAuth protected resource (RFC 9728: the metadata
// document at its path-aware well-known URL and the WWW-Authenticate challenge a 401
// carries), and is the authorization server of those URLs (Server): metadata (RFC
// 8414), dynamic client registration (RFC 7591), authorization code with PKCE S256
// only behind a consent page for a signed-in person, tokens bound to one MCP URL (RFC
// 8707), JWT access tokens checked against a live grant, and rotating refresh tokens.
//
// Start from [Server] (built from [Options]): its metadata handlers ([MetadataHandler]),
// consent, tokens and revocation; a [Grant] is one client's consent, [SSOSettings] a
// workspace's single sign-on.
package identity
