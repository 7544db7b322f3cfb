package providers

import (
	"context"

	"github.com/switchboard-hub/switchboard"
)

// PerTenant reports whether any registered provider supplies tools per tenant
// (Spec.TenantTools).
func (r *Registry) PerTenant() bool { return len(r.perTenant) > 0 }

// TenantTools lists the tools a tenant has of the providers whose tools exist per
// tenant, less any named like a registered operation's tool (a built-in tool is never
// shadowed) or given as another provider's.
func (r *Registry) TenantTools(ctx context.Context, tenant switchboard.TenantID) ([]*Tool, error) {
	var out []*Tool
	for _, spec := range r.perTenant {
		tools, err := spec.TenantTools(ctx, tenant)
		if err != nil {
			return nil, err
		}
		for _, t := range tools {
			if _, builtIn := r.tools[t.Name]; builtIn || t.Provider == nil || t.Provider.Name != spec.Name {
				continue
			}
			if t.Provider != spec {
				// The registry's own Spec, whatever copy built the tool: on a copy, as
				// the provider may hand the same tool to concurrent listings.
				c := *t
				c.Provider = spec
				t = &c
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// TenantTool returns the tenant's tool of that name among those TenantTools lists, or
// nil when there is none.
func (r *Registry) TenantTool(ctx context.Context, tenant switchboard.TenantID, name string) (*Tool, error) {
	if len(r.perTenant) == 0 {
		return nil, nil
	}
	tools, err := r.TenantTools(ctx, tenant)
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
