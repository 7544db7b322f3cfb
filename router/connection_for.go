package router

import (
	"context"
	"strings"

	"github.com/switchboard-hub/switchboard"
)

// ConnectionFor is the connection a call of a tool runs on: the one named (by id, or
// by its label among the principal's connections of the tool), none for a tool that
// runs on no connection, else the principal's only connection the tool can run on.
// Several such connections need the caller to name one.
func (r *Router) ConnectionFor(ctx context.Context, p switchboard.Principal, tool, named string) (string, error) {
	if named != "" && !labelLike(named) {
		return named, nil
	}
	if err := r.registry.AwaitTool(ctx, tool); err != nil {
		return "", notLoaded(ctx, err)
	}
	bindings, err := r.Tools(ctx, p)
	if err != nil {
		return "", err
	}
	return connectionAmong(bindings, tool, named)
}

// labelLike reports whether a named connection may be a label rather than an id
// (con_…), which is then looked up among the principal's connections.
func labelLike(named string) bool { return !strings.HasPrefix(named, "con_") }

// connectionAmong picks a tool's connection among the principal's bindings: the one
// named by its label, else the only one.
func connectionAmong(bindings []Binding, tool, named string) (string, error) {
	var refs []ConnectionRef
	for _, b := range bindings {
		if b.Tool.Name == tool {
			if b.Tool.Provider.Connectionless {
				return "", nil // a workflow or a hub tool: it runs on no connection
			}
			refs = b.Connections
		}
	}
	if named != "" {
		if len(refs) == 0 {
			return named, nil // the call names the connection; Execute says what is wrong with it
		}
		return PickConnection(refs, "connection", named)
	}
	switch len(refs) {
	case 0:
		return "", switchboard.NotFound("tool " + tool + " (connect an account of its provider first)")
	case 1:
		return refs[0].ID, nil
	default:
		return "", switchboard.Invalid("connection_id", "is required: you have several connections this tool can run on")
	}
}
