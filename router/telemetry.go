package router

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/telemetry"
)

// startSpan starts the router's span of a call, when tracing is on.
func (r *Router) startSpan(ctx context.Context, p switchboard.Principal, req Request) (context.Context, trace.Span) {
	if !r.tel.Tracing() {
		return ctx, trace.SpanFromContext(ctx)
	}
	return r.tel.Start(ctx, "router.execute", trace.WithAttributes(
		attribute.String("gen_ai.tool.name", req.Tool),
		attribute.String("switchboard.tenant.id", string(p.TenantID)),
		attribute.String("switchboard.principal", p.ID()),
		attribute.String("switchboard.connection.id", req.ConnectionID),
	))
}

// observe records a finished call's metrics: labelled by provider, tool and outcome,
// never by tenant. Tools a connection brings itself are labelled as a group (their
// names come from tenants' servers and descriptions); a call refused before its tool
// was found is labelled by its name only if the registry has it, and unknown otherwise.
func (r *Router) observe(req Request, tool *providers.Tool, start time.Time, status *upstreamStatus, err error) {
	m := r.tel.Metrics()
	if m == nil {
		return
	}
	c := telemetry.ToolCall{
		Outcome:       "ok",
		Duration:      r.now().Sub(start),
		Upstream:      status.stats.Upstream(),
		RateLimitWait: status.stats.RateLimitWait(),
		RateLimited:   status.stats.RateLimited(),
	}
	if err != nil {
		c.Outcome = string(switchboard.CodeOf(err))
	}
	if tool == nil {
		if t, ok := r.registry.Tool(req.Tool); ok {
			tool = t
		}
	}
	switch {
	case tool == nil:
		c.Provider, c.Tool = telemetry.ToolUnknown, telemetry.ToolUnknown
	case tool.Provider.PerConnection():
		c.Provider, c.Tool = tool.Provider.Name, telemetry.ToolDynamic
	default:
		c.Provider, c.Tool = tool.Provider.Name, tool.Name
	}
	m.ObserveToolCall(c)
}
