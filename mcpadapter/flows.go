package mcpadapter

import (
	"context"
	"errors"
	"log/slog"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/workflows"
)

// flowsTemplate is the resource template of the caller's flow instances.
const flowsTemplate = workflows.InstanceURIPrefix + "{instance_id}"

// FlowInstances reads one of a principal's flow instances (workflows.Service).
type FlowInstances interface {
	Instance(ctx context.Context, p switchboard.Principal, id string) (workflows.FlowAnswer, error)
}

// flowsExt is the flows extension: each flow instance as a resource its starter may
// read and subscribe to.
type flowsExt struct {
	flows FlowInstances
	log   *slog.Logger
}

// FlowsExtension returns the extension that serves, at every MCP URL, the caller's
// flow instances (runs of saved workflows) as the resource template
// switchboard://flows/{instance_id}: reading one answers what query_flow__<name>
// answers (status, and output once completed), and a session subscribed to one
// (resources/subscribe, subscribe_flow, or subscriptions/listen on 2026-07-28) hears
// notifications/resources/updated on every change of its state, made on any node
// (Adapter.RunChanged). Only the instance's starter may read or subscribe: another's
// is not found, as a missing one is.
func FlowsExtension(flows FlowInstances, log *slog.Logger) Extension {
	if log == nil {
		log = slog.Default()
	}
	x := &flowsExt{flows: flows, log: log}
	return Extension{Name: "flows", ResourceTemplates: x.templates, Subscribable: x.subscribable}
}

func (x *flowsExt) templates(_ context.Context, _ Scope) ([]server.ServerResourceTemplate, error) {
	t := mcp.NewResourceTemplate(flowsTemplate, "flow instance",
		mcp.WithTemplateDescription("One of your flow instances (a run of a saved workflow): its status, and its output once completed, as query_flow__<name> answers. Subscribe to it to hear of every change of its state."),
		mcp.WithTemplateMIMEType("application/json"))
	return []server.ServerResourceTemplate{{Template: t, Handler: x.read}}, nil
}

func (x *flowsExt) read(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	p, ok := switchboard.PrincipalFrom(ctx)
	if !ok {
		return nil, errors.New("no principal in context")
	}
	id, ok := workflows.InstanceOf(req.Params.URI)
	if !ok {
		return nil, switchboard.NotFound("resource " + req.Params.URI)
	}
	ans, err := x.flows.Instance(ctx, p, id)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeNotFound {
			return nil, switchboard.NotFound("resource " + req.Params.URI)
		}
		x.log.ErrorContext(ctx, "read flow instance resource", "run", id, "err", err)
		return nil, errors.New("internal error")
	}
	return jsonContents(req.Params.URI, ans)
}

// subscribable reports whether uri is one of the scope's principal's flow instances.
func (x *flowsExt) subscribable(ctx context.Context, sc Scope, uri string) bool {
	id, ok := workflows.InstanceOf(uri)
	if !ok {
		return false
	}
	_, err := x.flows.Instance(ctx, sc.Principal, id)
	return err == nil
}
