package router

import (
	"context"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// prepareConnectionless checks a call of a tool that runs on no connection (its
// provider is connectionless: the hub's own tools, a tenant's saved workflows): its
// arguments, that no connection is named, that an agent's key holds it in its agent's
// selection (bound to no connection) unless its provider is ambient, and the
// principal's confirm policy.
func (r *Router) prepareConnectionless(ctx context.Context, p switchboard.Principal, req Request, tool *providers.Tool) (Prepared, error) {
	if err := tool.Validate(req.Args); err != nil {
		return Prepared{}, err
	}
	if req.ConnectionID != "" {
		return Prepared{}, switchboard.Invalid("connection", tool.Name+" runs on no connection; leave it out")
	}
	if p.Kind != switchboard.PrincipalUser && !tool.Provider.Ambient {
		if err := r.checkSelected(ctx, p, req); err != nil {
			return Prepared{}, err
		}
	}
	pol, err := r.Policy(ctx, p)
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{Tool: tool, NeedsConfirm: pol.Covers(tool), Policy: pol}, nil
}

// runConnectionless runs a prepared connectionless tool as the principal: no
// credentials are opened and no upstream deadline applies (such a tool bounds its own
// work: a workflow run has its time limit).
func (r *Router) runConnectionless(ctx context.Context, p switchboard.Principal, tool *providers.Tool, req Request) (any, error) {
	out, err := tool.Op.Invoke(ctx, &providers.Call{Tenant: p.TenantID, Principal: p, Confirmed: req.Confirmed}, req.Args)
	if err != nil {
		if ctx.Err() != nil {
			return nil, r.stopped(ctx, err)
		}
		return nil, r.internal(ctx, err, "run %s", tool.Name)
	}
	return out, nil
}

// connectionlessBindings lists the tools of connectionless providers the tenant has:
// their registered operations and their tools per tenant, each on no connection.
func (r *Router) connectionlessBindings(ctx context.Context, p switchboard.Principal) ([]Binding, error) {
	var out []Binding
	for _, spec := range r.registry.Registered() { // a deferred provider is never connectionless
		if !spec.Connectionless {
			continue
		}
		for _, t := range r.registry.Tools(spec.Name) {
			out = append(out, Binding{Tool: t})
		}
	}
	if !r.registry.PerTenant() {
		return out, nil
	}
	tools, err := r.registry.TenantTools(ctx, p.TenantID)
	if err != nil {
		return nil, r.internal(ctx, err, "list the tools of tenant %s", p.TenantID)
	}
	for _, t := range tools {
		out = append(out, Binding{Tool: t})
	}
	return out, nil
}
