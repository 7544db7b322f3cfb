package providers

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// UpstreamError is a failure answered by a provider, classified so that an agent can
// act on it: rate_limited (retry after RetryAfter), reconnect (the credential is no
// longer accepted), forbidden (missing scope or permission), not_found, invalid,
// conflict, or upstream (the provider failed).
type UpstreamError struct {
	Provider   string
	Status     int              // the HTTP status the upstream answered (200 for Slack ok:false)
	Code       switchboard.Code // our classification
	Reason     string           // the upstream's own error code, e.g. "channel_not_found"
	Message    string           // what the upstream said, or what to do
	RetryAfter time.Duration
	// Result is the tool's own failed answer (isError) from an upstream that answers in
	// MCP content (a remote MCP server), which an MCP client gets as the server gave it;
	// nil for other upstreams.
	Result *ContentResult
}

// Error renders the failure; it carries no credential.
func (e *UpstreamError) Error() string {
	msg := fmt.Sprintf("%s answered %d", e.Provider, e.Status)
	if e.Reason != "" {
		msg += " " + e.Reason
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %d s)", int(e.RetryAfter.Round(time.Second)/time.Second))
	}
	return msg
}

// ErrorCode implements switchboard.Coder.
func (e *UpstreamError) ErrorCode() switchboard.Code { return e.Code }

// CodeForStatus classifies an upstream HTTP status.
func CodeForStatus(status int) switchboard.Code {
	switch {
	case status == http.StatusUnauthorized:
		return switchboard.CodeReconnect
	case status == http.StatusForbidden:
		return switchboard.CodeForbidden
	case status == http.StatusNotFound || status == http.StatusGone:
		return switchboard.CodeNotFound
	case status == http.StatusConflict:
		return switchboard.CodeConflict
	case status == http.StatusTooManyRequests:
		return switchboard.CodeRateLimited
	case status >= 400 && status < 500:
		return switchboard.CodeInvalid
	default:
		return switchboard.CodeUpstream
	}
}

// StatusError builds the UpstreamError for a failed HTTP response: its code from the
// status, and its retry-after from Retry-After or X-RateLimit-Reset. Providers refine
// it (GitHub's 403 with X-RateLimit-Remaining: 0 is a rate limit, for example).
func StatusError(provider string, resp *http.Response, reason, message string) *UpstreamError {
	e := &UpstreamError{Provider: provider, Status: resp.StatusCode, Code: CodeForStatus(resp.StatusCode), Reason: reason, Message: message}
	if wait, limited := RateLimitWait(resp.Header, time.Now()); limited || resp.StatusCode == http.StatusTooManyRequests {
		e.Code = switchboard.CodeRateLimited
		e.RetryAfter = wait
	}
	return e
}

// RateLimitWait reads how long an upstream asks us to wait: Retry-After (seconds or an
// HTTP date), or, when X-RateLimit-Remaining is 0, until X-RateLimit-Reset (epoch
// seconds, GitHub's style). limited is true when the headers say the window is spent.
func RateLimitWait(h http.Header, now time.Time) (wait time.Duration, limited bool) {
	if v := h.Get("Retry-After"); v != "" {
		if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
			return time.Duration(secs) * time.Second, true
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0), true
		}
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return max(time.Unix(reset, 0).Sub(now), 0), true
		}
	}
	return 0, false
}
