package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// Connection is what a provider whose tools exist per connection (Spec.Tools) is told
// of the connection whose tools it lists.
type Connection struct {
	Tenant   switchboard.TenantID
	ID       string
	Provider string
	// Version changes with the connection's credentials: a provider that keeps a session
	// per connection opens a new one for a newer version.
	Version int64
	Label   string // the account label: a remote MCP server's name
	Meta    map[string]string
}

// connectionToolName is what a per-connection tool's name may be on the MCP surface.
var connectionToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// NewConnectionTool returns a tool a connection brings itself (a remote MCP server's, an
// imported OpenAPI operation), with its schemas as they were given rather than
// reflected. The input schema is compiled for validation; an output schema may be empty.
// tools/list carries the lean forms of its schemas (ListedInput, ListedOutput), as for
// every other tool; the full ones stay in the REST catalog and validate. A schema that
// has no lean form (an output schema without a type at its root) is listed as given.
func NewConnectionTool(spec *Spec, name string, op Op, input, output json.RawMessage) (*Tool, error) {
	if !connectionToolName.MatchString(name) {
		return nil, fmt.Errorf("tool %q: name must match %s", name, connectionToolName)
	}
	if len(input) == 0 {
		input = json.RawMessage(`{"type":"object"}`)
	}
	v, err := NewValidator(input)
	if err != nil {
		return nil, fmt.Errorf("tool %s: compile input schema: %w", name, err)
	}
	listedIn, listedOut := input, output
	if lean, err := ListedInput(input); err == nil {
		listedIn = lean
	}
	if len(output) > 0 {
		if lean, err := ListedOutput(output); err == nil {
			listedOut = lean
		}
	}
	return &Tool{Name: name, Provider: spec, Op: op, Info: op.Info(), InputSchema: input, OutputSchema: output,
		ListedInputSchema: listedIn, ListedOutputSchema: listedOut, validator: v, profiles: &profiles{}}, nil
}

// PerConnection reports whether the provider's tools exist per connection (Spec.Tools)
// rather than being its registered operations.
func (s *Spec) PerConnection() bool { return s.Tools != nil }

// Connectable reports whether a person connects an account of the provider with an
// API token or OAuth: not a provider whose connections are made by its own
// registration (PerConnection), nor one that runs on no connection (Connectionless).
func (s *Spec) Connectable() bool { return !s.PerConnection() && !s.Connectionless }

// PerConnection reports whether any registered provider supplies its tools per connection.
func (r *Registry) PerConnection() bool {
	for _, s := range r.specs {
		if s.PerConnection() {
			return true
		}
	}
	return false
}

// ConnectionTools lists the tools a connection offers: its provider's operations, or,
// for a provider whose tools exist per connection, those the provider supplies for it,
// less any named like a tool of the hub's (a registered operation's, or switchboard…),
// so a built-in tool is never shadowed whatever a connection calls its tools. An
// unknown provider offers none.
func (r *Registry) ConnectionTools(ctx context.Context, c Connection) ([]*Tool, error) {
	spec, ok := r.Provider(c.Provider)
	if !ok {
		return nil, nil
	}
	if !spec.PerConnection() {
		return r.Tools(c.Provider), nil
	}
	tools, err := spec.Tools(ctx, c)
	if err != nil {
		return nil, err
	}
	out := tools[:0:0]
	for _, t := range tools {
		if r.ReservedToolName(t.Name) || t.Provider == nil || t.Provider.Name != c.Provider {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// ConnectionTool returns the connection's tool of that name (see ConnectionTools), or
// nil when the connection offers none by that name.
func (r *Registry) ConnectionTool(ctx context.Context, c Connection, name string) (*Tool, error) {
	spec, ok := r.Provider(c.Provider)
	if !ok {
		return nil, nil
	}
	if !spec.PerConnection() {
		if t, ok := r.Tool(name); ok && t.Provider == spec {
			return t, nil
		}
		return nil, nil
	}
	tools, err := r.ConnectionTools(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, t := range tools {
		if t.Name == name {
			return t, nil
		}
	}
	return nil, nil
}

// Wait takes one request's worth of the connection's rate limit, for an operation whose
// requests do not go through Call.HTTP (a remote MCP server's session): it waits for the
// token bucket and the upstream's announced window, or fails at once with rate_limited
// and the time to wait when that is longer than the limit's maximum wait.
func (c *Call) Wait(ctx context.Context) error {
	if c.Limiter == nil {
		return nil
	}
	return c.Limiter.take(ctx)
}

// Block records an upstream's announced rate-limit window (a 429 with Retry-After) for
// the connection, so every node's next calls wait for it.
func (c *Call) Block(ctx context.Context, wait time.Duration) {
	if c.Limiter == nil || wait <= 0 {
		return
	}
	c.Limiter.store.Block(ctx, c.Limiter.key, wait)
}
