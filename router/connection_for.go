package router

import (
	"context"

	"github.com/switchboard-hub/switchboard"
)

// ConnectionFor is the connection a call of a tool runs on: the one named, none for a
// tool that runs on no connection, else the principal's only connection the tool can
// run on. Several such connections need the caller to name one.
func (r *Router) ConnectionFor(ctx context.Context, p switchboard.Principal, tool, named string) (string, error) {
	if named != "" {
		return named, nil
	}
	bindings, err := r.Tools(ctx, p)
	if err != nil {
		return "", err
	}
	return connectionAmong(bindings, tool)
}

// connectionAmong picks a tool's connection among the principal's bindings.
func connectionAmong(bindings []Binding, tool string) (string, error) {
	var refs []ConnectionRef
	for _, b := range bindings {
		if b.Tool.Name == tool {
			if b.Tool.Provider.Connectionless {
				return "", nil // a workflow or a hub tool: it runs on no connection
			}
			refs = b.Connections
		}
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
