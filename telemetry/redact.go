package telemetry

import (
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

// secretShape matches a secret RedactPath has not hidden: its prefix followed by
// anything but the ellipsis that stands for it once hidden.
var secretShape = regexp.MustCompile(`sb[a-z]_[^/?&#…]`)

// HasSecret reports whether s carries something shaped like one of the hub's secrets
// that RedactPath hides.
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
