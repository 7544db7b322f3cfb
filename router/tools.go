package router

import (
	"context"
	"fmt"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
)

// ConnectionRef names one connection a tool can run on: its id and a label unique
// among the principal's connections of that provider.
type ConnectionRef struct {
	ID    string
	Label string
	// NeedsReconnect is set when the provider refused the connection's credentials: its
	// tools stay listed (marked) and calls return the reconnect link.
	NeedsReconnect bool
}

// Binding is one tool a principal may call, with the connections it can run on
// (at least one; a tool with several takes a connection argument).
type Binding struct {
	Tool        *providers.Tool
	Connections []ConnectionRef
}

// Tools lists every tool the principal may call: each operation of each provider the
// principal has a usable connection to, in registry order. Connections that need
// reconnecting are included, flagged, so their tools stay listed.
func (r *Router) Tools(ctx context.Context, p switchboard.Principal) ([]Binding, error) {
	conns, err := r.conns.Usable(ctx, p)
	if err != nil {
		return nil, r.internal(err, "list usable connections of %s", p.ID())
	}
	byProvider := map[string][]ConnectionRef{}
	seen := map[string]int{}
	var dynamic []connections.Connection
	for _, c := range conns {
		if c.Status == connections.StatusRevoked {
			continue
		}
		if r.isDynamic(&c) {
			dynamic = append(dynamic, c)
			continue
		}
		label := c.AccountLabel
		key := c.Provider + "\x00" + label
		if seen[key]++; seen[key] > 1 {
			label = fmt.Sprintf("%s (%s)", label, c.ID)
		}
		byProvider[c.Provider] = append(byProvider[c.Provider], ConnectionRef{ID: c.ID, Label: label, NeedsReconnect: c.Status == connections.StatusNeedsReconnect})
	}
	var out []Binding
	for _, spec := range r.registry.Providers() {
		refs := byProvider[spec.Name]
		if len(refs) == 0 {
			continue
		}
		for _, t := range r.registry.Tools(spec.Name) {
			out = append(out, Binding{Tool: t, Connections: refs})
		}
	}
	return append(out, r.dynamicBindings(ctx, dynamic)...), nil
}

// dynamicBindings lists the tools of connections that bring their own (remote MCP
// servers), each on its one connection. A connection whose tools cannot be listed now
// (the server is down) is left out and logged: the others' tools stay listed.
func (r *Router) dynamicBindings(ctx context.Context, conns []connections.Connection) []Binding {
	var out []Binding
	for _, c := range conns {
		ref := ConnectionRef{ID: c.ID, Label: c.AccountLabel, NeedsReconnect: c.Status == connections.StatusNeedsReconnect}
		tools, err := r.dynamic.ConnectionTools(ctx, c)
		if err != nil {
			r.log.Warn("list tools of remote connection", "connection", c.ID, "err", err)
			continue
		}
		for _, t := range tools {
			out = append(out, Binding{Tool: t, Connections: []ConnectionRef{ref}})
		}
	}
	return out
}
