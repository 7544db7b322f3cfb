package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"
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
	return &Tool{Name: name, Provider: spec, Op: op, Info: op.Info(), InputSchema: input, OutputSchema: output,
		ListedInputSchema: input, ListedOutputSchema: output, validator: v}, nil
}

// Wait takes one request's worth of the connection's rate limit, for calls that do not
// go through a client of NewClient (a remote MCP server's session): it waits for the
// token bucket and the upstream's announced window, or fails at once with rate_limited
// and the time to wait when that is longer than the limiter's maximum wait.
func (l *Limiter) Wait(ctx context.Context) error { return l.take(ctx) }

// Block records an upstream's announced rate-limit window (a 429 with Retry-After).
func (l *Limiter) Block(ctx context.Context, wait time.Duration) {
	l.store.Block(ctx, l.key, wait)
}
