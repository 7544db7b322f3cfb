package router

import (
	"context"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
)

// DynamicTools supplies tools that are not in the registry: those a connection brings
// itself (a remote MCP server's), which change when the upstream says so. The router
// lists them with the registry's tools and runs them through the same ownership check,
// per-connection rate limit and audit.
type DynamicTools interface {
	// Provider is the provider of the connections whose tools it supplies (its Name,
	// and its RateLimit for each connection).
	Provider() *providers.Spec
	// ConnectionTools lists one connection's tools, named as callers see them. The
	// router has checked that the connection is usable by the caller.
	ConnectionTools(ctx context.Context, c connections.Connection) ([]*providers.Tool, error)
}

// connectionTools lists a connection's dynamic tools except those named like one of
// the hub's (a registered provider's tool, or switchboard_…): built-in tools are never
// shadowed, whatever a remote server calls its tools.
func (r *Router) connectionTools(ctx context.Context, c connections.Connection) ([]*providers.Tool, error) {
	tools, err := r.dynamic.ConnectionTools(ctx, c)
	if err != nil {
		return nil, err
	}
	out := tools[:0:0]
	for _, t := range tools {
		if r.registry.ReservedToolName(t.Name) {
			r.log.WarnContext(ctx, "remote tool left out: the hub's own tool has its name", "connection", c.ID, "tool", t.Name)
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// dynamicTool finds a connection's dynamic tool by name.
func (r *Router) dynamicTool(ctx context.Context, c connections.Connection, name string) (*providers.Tool, error) {
	tools, err := r.connectionTools(ctx, c)
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

// isDynamic reports whether the connection's tools come from the dynamic source.
func (r *Router) isDynamic(c *connections.Connection) bool {
	return r.dynamic != nil && c.Provider == r.dynamic.Provider().Name
}
