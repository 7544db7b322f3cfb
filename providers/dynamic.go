package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// dynamicToolName is what a tool name may be on the MCP surface.
var dynamicToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// NewDynamicTool returns a tool that is not in the registry: one a connection brings
// itself (a remote MCP server's), with its schemas as the upstream gives them. The
// input schema is compiled for validation; an output schema may be empty.
func NewDynamicTool(spec *Spec, name string, op Op, input, output json.RawMessage) (*Tool, error) {
	if !dynamicToolName.MatchString(name) {
		return nil, fmt.Errorf("dynamic tool %q: name must match %s", name, dynamicToolName)
	}
	if len(input) == 0 {
		input = json.RawMessage(`{"type":"object"}`)
	}
	v, err := NewValidator(input)
	if err != nil {
		return nil, fmt.Errorf("dynamic tool %s: compile input schema: %w", name, err)
	}
	return &Tool{Name: name, Provider: spec, Op: op, Info: op.Info(), InputSchema: input, OutputSchema: output, validator: v}, nil
}

// Wait takes one request's worth of the connection's rate limit, for calls that do not
// go through a client of NewClient (a remote MCP server's session): it waits for the
// token bucket and the upstream's announced window, or fails at once with rate_limited
// and the time to wait when that is longer than the limiter's maximum wait.
func (l *Limiter) Wait(ctx context.Context) error {
	now := time.Now()
	if until := l.blockedUntil.Load(); until > now.UnixNano() {
		wait := time.Duration(until - now.UnixNano())
		if wait > l.maxWait {
			return l.limitedWait(wait)
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
	r := l.bucket.ReserveN(time.Now(), 1)
	if d := r.Delay(); d > 0 {
		if d > l.maxWait {
			r.Cancel()
			return l.limitedWait(d)
		}
		if err := sleep(ctx, d); err != nil {
			r.Cancel()
			return err
		}
	}
	return nil
}

// Block records an upstream's announced rate-limit window (a 429 with Retry-After).
func (l *Limiter) Block(wait time.Duration) {
	if wait > 0 {
		l.blockedUntil.Store(time.Now().Add(wait).UnixNano())
	}
}

func (l *Limiter) limitedWait(wait time.Duration) error {
	return &UpstreamError{
		Provider: l.provider, Status: http.StatusTooManyRequests, Code: switchboard.CodeRateLimited,
		Reason: "rate_limited", Message: "this connection's rate limit is spent; nothing was sent", RetryAfter: wait,
	}
}
