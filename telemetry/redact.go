package telemetry

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"regexp"
	"strings"
)

// secretInPath matches what a path or a query may carry that must stay out of logs and
// traces: API keys, sessions, OAuth codes and tokens, and one-time links
// (/invite/sbi_…), by their prefixes.
var secretInPath = regexp.MustCompile(`sb[a-z]_[^/?&#]*`)

// RedactPath hides the secrets in a request path, keeping their kind: /invite/sbi_….
func RedactPath(p string) string {
	return secretInPath.ReplaceAllStringFunc(p, func(m string) string { return m[:4] + "…" })
}

// secretShape matches a secret RedactPath has not hidden (its prefix followed by
// anything but the ellipsis that stands for it once hidden), or an MCP session id.
var secretShape = regexp.MustCompile(`sb[a-z]_[^/?&#…]|` + sessionID.String())

// sessionID matches the MCP session ids the hub issues (sessions.NewID): with the
// caller's key, one resumes the session.
var sessionID = regexp.MustCompile(`mcs_[0-9a-z]{8,}`)

// HideSessionIDs replaces every MCP session id in s by "mcs_[hidden]".
func HideSessionIDs(s string) string { return sessionID.ReplaceAllString(s, "mcs_[hidden]") }

// SessionDigest stands for an MCP session id in traces: the first 16 hex digits of its
// SHA-256, the same for every span of the session and no use to resume it.
func SessionDigest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// HasSecret reports whether s carries something shaped like one of the hub's secrets
// that the logs hide: a key, a session, a one-time link, an MCP session id.
func HasSecret(s string) bool { return secretShape.MatchString(s) }

// RedactURL is a URL as traces show it: scheme, host, the path with its secrets hidden
// (see RedactPath), and the query's names without their values, which may be keys
// (?api_key=…); never user information or a fragment.
func RedactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	s := u.Scheme + "://" + u.Host + RedactPath(u.EscapedPath())
	if u.RawQuery == "" {
		return s
	}
	names := []string{}
	for _, pair := range strings.Split(u.RawQuery, "&") {
		name, _, _ := strings.Cut(pair, "=")
		if name = RedactPath(name); name != "" {
			names = append(names, name+"=REDACTED")
		}
	}
	return s + "?" + strings.Join(names, "&")
}
