package router

import (
	"context"

	"github.com/switchboard-hub/switchboard"
)

// selection is the set of tools, each on its connection, that an agent's key may
// call: its agent's selection (none without an Agents).
func (r *Router) selection(ctx context.Context, p switchboard.Principal) (map[Selected]bool, error) {
	if r.agents == nil {
		return nil, nil
	}
	sel, err := r.agents.Selection(ctx, p)
	if err != nil {
		return nil, r.internal(ctx, err, "read the tools of %s", p.ID())
	}
	out := make(map[Selected]bool, len(sel))
	for _, s := range sel {
		out[s] = true
	}
	return out, nil
}

// checkSelected refuses an agent's call of a tool its agent did not select on that
// connection, whatever surface it came through (a workflow's step included): the same
// answer as for a tool that does not exist, naming why.
func (r *Router) checkSelected(ctx context.Context, p switchboard.Principal, req Request) error {
	sel, err := r.selection(ctx, p)
	if err != nil {
		return err
	}
	if !sel[Selected{Tool: req.Tool, ConnectionID: req.ConnectionID}] {
		return errNotSelected(req.Tool)
	}
	return nil
}

// errNotSelected refuses a tool outside an agent's selection.
func errNotSelected(tool string) error {
	return switchboard.NotFound("tool " + tool + " (not one of this agent's tools on that connection)")
}
