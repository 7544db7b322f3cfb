package providers

import (
	"net/http"
	"strings"

	"github.com/switchboard-hub/switchboard"
)

// Call carries what one operation needs: who it runs for, which connection, where the
// upstream is, and an HTTP client that already authenticates, rate-limits and retries
// what is safe to retry. An operation never builds its own client and never sees a
// refresh token.
type Call struct {
	Tenant switchboard.TenantID
	// Principal is who the call runs for: what a connectionless tool (Spec.Connectionless)
	// acts as, in place of a connection's credentials.
	Principal switchboard.Principal
	// Confirmed says a person confirmed this call (a tool that confirms itself,
	// Spec.ConfirmsItself, then asks nobody again).
	Confirmed    bool
	ConnectionID string
	BaseURL      string // the provider's API base URL for this connection, no trailing slash
	HTTP         *http.Client
	// Meta is the connection's non-secret account data recorded at connect time (Account.Meta).
	Meta map[string]string
	// Limiter is the connection's rate limit, which Call.HTTP already takes; an operation
	// whose requests go another way takes it with Wait.
	Limiter *Limiter
}

// URL joins the base URL and a path that starts with "/".
func (c *Call) URL(path string) string {
	return strings.TrimRight(c.BaseURL, "/") + path
}
