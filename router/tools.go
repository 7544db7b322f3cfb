package router

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/providers"
)

// ConnectionRef names one connection a tool can run on: its id and a label unique
// among the principal's connections of that provider.
type ConnectionRef struct {
	ID    string
	Label string
	// Account is the connection's own account label. Label is the same unless other
	// connections of the principal share it: then Label adds the id ("Work Slack
	// (con_…)"), except on the principal's own connection when it is the only one of
	// them the principal owns (see labelConnections).
	Account string
	// Owner is the id of the user who owns the connection.
	Owner string
	// NeedsReconnect is set when the provider refused the connection's credentials: its
	// tools stay listed (marked) and calls return the reconnect link.
	NeedsReconnect bool
	// Scopes are the scopes the connection's credentials were granted, space-separated,
	// where the provider says ("" when not known).
	Scopes string
}

// Binding is one tool a principal may call, with the connections it can run on (at
// least one; a tool with several takes a connection argument), or none for a tool of a
// connectionless provider.
type Binding struct {
	Tool        *providers.Tool
	Connections []ConnectionRef
}

// Tools lists every tool the principal may call: each operation of each provider the
// principal has a usable connection to, in registry order. For an agent's key, only
// the tools its agent selected, each on the connection it is bound to, where that
// connection is shared or belongs to the user Agents.PrivateUser names (a tool selected
// on none, on the first of its provider's), and the
// ambient tools (Spec.Ambient), which every caller has. Connections
// that need reconnecting are included, flagged, so their tools stay listed.
func (r *Router) Tools(ctx context.Context, p switchboard.Principal) ([]Binding, error) {
	all, err := r.tools(ctx, p)
	if err != nil || p.Kind == switchboard.PrincipalUser {
		return all, err
	}
	sel, err := r.selection(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []Binding
	for _, b := range all {
		if len(b.Connections) == 0 {
			if b.Tool.Provider.Ambient || sel[Selected{Tool: b.Tool.Name}] {
				out = append(out, b)
			}
			continue
		}
		if sel[Selected{Tool: b.Tool.Name}] {
			// Selected on no connection, before its provider was connected: on the
			// connection the builder would bind it to (the first), until the agent is
			// bound to one.
			out = append(out, Binding{Tool: b.Tool, Connections: b.Connections[:1]})
			continue
		}
		for _, c := range b.Connections {
			if sel[Selected{Tool: b.Tool.Name, ConnectionID: c.ID}] {
				out = append(out, Binding{Tool: b.Tool, Connections: []ConnectionRef{c}})
				break
			}
		}
	}
	return out, nil
}

// Connections lists the ids of the connections of provider that p may use and that
// work now, oldest first, as Tools decides: a user's usable connections that are
// neither revoked nor waiting to be reconnected, whether or not they bring tools; for
// an agent's key, those its agent selected a tool on.
func (r *Router) Connections(ctx context.Context, p switchboard.Principal, provider string) ([]string, error) {
	var out []string
	if p.Kind != switchboard.PrincipalUser {
		bindings, err := r.Tools(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, b := range bindings {
			if b.Tool.Provider == nil || b.Tool.Provider.Name != provider {
				continue
			}
			for _, c := range b.Connections {
				if !c.NeedsReconnect && !slices.Contains(out, c.ID) {
					out = append(out, c.ID)
				}
			}
		}
		return out, nil
	}
	user, err := r.connectionUser(ctx, p)
	if err != nil {
		return nil, r.internal(ctx, err, "read whose connections %s may use", p.ID())
	}
	conns, err := r.conns.Usable(ctx, user)
	if err != nil {
		return nil, r.internal(ctx, err, "list usable connections of %s", p.ID())
	}
	for _, c := range conns {
		if c.Provider == provider && c.Status != connections.StatusRevoked && c.Status != connections.StatusNeedsReconnect {
			out = append(out, c.ID)
		}
	}
	return out, nil
}

// tools lists the tools of every connection the principal may use (see Tools).
func (r *Router) tools(ctx context.Context, p switchboard.Principal) ([]Binding, error) {
	user, err := r.connectionUser(ctx, p)
	if err != nil {
		return nil, r.internal(ctx, err, "read whose connections %s may use", p.ID())
	}
	conns, err := r.conns.Usable(ctx, user)
	if err != nil {
		return nil, r.internal(ctx, err, "list usable connections of %s", p.ID())
	}
	// Only a principal with a connection of a provider still loading (an OpenAPI
	// description read after the node was ready) waits for it.
	for _, c := range conns {
		if r.registry.Deferred(c.Provider) {
			if err := r.registry.Loaded(ctx); err != nil {
				return nil, notLoaded(ctx, err)
			}
			break
		}
	}
	var own, static []connections.Connection
	for _, c := range conns {
		if c.Status == connections.StatusRevoked {
			continue
		}
		if spec, ok := r.registry.Provider(c.Provider); ok && spec.PerConnection() {
			own = append(own, c)
			continue
		}
		static = append(static, c)
	}
	byProvider := map[string][]ConnectionRef{}
	for i, label := range labelConnections(static, user.UserID) {
		c := static[i]
		byProvider[c.Provider] = append(byProvider[c.Provider], ConnectionRef{ID: c.ID, Label: label, Account: c.AccountLabel, Owner: c.OwnerUserID, NeedsReconnect: c.Status == connections.StatusNeedsReconnect, Scopes: c.Scopes})
	}
	var out []Binding
	for _, spec := range r.registry.Registered() {
		refs := byProvider[spec.Name]
		if len(refs) == 0 {
			continue
		}
		for _, t := range r.registry.Tools(spec.Name) {
			out = append(out, Binding{Tool: t, Connections: refs})
		}
	}
	out = append(out, r.connectionBindings(ctx, own)...)
	free, err := r.connectionlessBindings(ctx, p)
	if err != nil {
		return nil, err
	}
	return append(out, free...), nil
}

// labelConnections returns a label for each connection, unique among the connections
// of its provider: its account label, or, where several share that label, the label
// with the connection's id ("Work Slack (con_…)"). The user's own connection keeps the
// bare label when it is the only one of them the user owns, so another user's shared
// connection never takes the name of the user's own; when none or several are the
// user's, none keeps it and the bare label names no connection (a call naming it is
// refused with their ids).
func labelConnections(conns []connections.Connection, user string) []string {
	type group struct{ n, own int }
	groups := map[string]*group{}
	key := func(c connections.Connection) string { return c.Provider + "\x00" + c.AccountLabel }
	for _, c := range conns {
		g := groups[key(c)]
		if g == nil {
			g = &group{}
			groups[key(c)] = g
		}
		g.n++
		if user != "" && c.OwnerUserID == user {
			g.own++
		}
	}
	labels := make([]string, len(conns))
	for i, c := range conns {
		g := groups[key(c)]
		labels[i] = c.AccountLabel
		if g.n > 1 && (g.own != 1 || c.OwnerUserID != user) {
			labels[i] = fmt.Sprintf("%s (%s)", c.AccountLabel, c.ID)
		}
	}
	// An account label may itself read "Work Slack (con_…)": a label that is still
	// taken twice gets the id too, on every connection but one already carrying it.
	for changed := true; changed; {
		changed = false
		taken := map[string]int{}
		for i, c := range conns {
			taken[c.Provider+"\x00"+labels[i]]++
		}
		for i, c := range conns {
			suffix := " (" + c.ID + ")"
			if taken[c.Provider+"\x00"+labels[i]] > 1 && !strings.HasSuffix(labels[i], suffix) {
				labels[i] += suffix
				changed = true
			}
		}
	}
	return labels
}

// connectionBindings lists the tools of connections that bring their own (remote MCP
// servers, imported OpenAPI descriptions), each on its one connection. A connection
// whose tools cannot be listed now (the server is down) is left out and logged: the
// others' tools stay listed. Tool names are unique: a tool named like a built-in one is
// left out (see providers.Registry.ConnectionTools), and of two connections' tools with
// one name the older connection's is kept (conns come oldest first).
func (r *Router) connectionBindings(ctx context.Context, conns []connections.Connection) []Binding {
	var out []Binding
	taken := map[string]string{} // tool name -> connection id
	for _, c := range conns {
		ref := ConnectionRef{ID: c.ID, Label: c.AccountLabel, Account: c.AccountLabel, Owner: c.OwnerUserID, NeedsReconnect: c.Status == connections.StatusNeedsReconnect, Scopes: c.Scopes}
		tools, err := r.registry.ConnectionTools(ctx, c.Ref())
		if err != nil {
			r.log.WarnContext(ctx, "list the tools of a connection", "connection", c.ID, "err", err)
			continue
		}
		for _, t := range tools {
			if first, dup := taken[t.Name]; dup {
				r.log.WarnContext(ctx, "tool left out: an older connection has a tool of that name", "connection", c.ID, "tool", t.Name, "kept", first)
				continue
			}
			taken[t.Name] = c.ID
			out = append(out, Binding{Tool: t, Connections: []ConnectionRef{ref}})
		}
	}
	return out
}
