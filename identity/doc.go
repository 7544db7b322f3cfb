// Package identity is where Switchboard meets OAuth 2.1 clients of its MCP URLs. This
// first part publishes each MCP URL as an OAuth protected resource (RFC 9728): the
// metadata document at its path-aware well-known URL and the WWW-Authenticate
// challenge a 401 carries, so a client following the MCP authorization specification
// learns what the URL is and what it accepts. The authorization server itself (RFC
// 8414 metadata, client registration, consent, tokens) is not built yet; until it is,
// the metadata names no authorization server and a client's registration attempt
// gets an answer that says to use an API key.
package identity
