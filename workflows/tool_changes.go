package workflows

import (
	"context"
	"log/slog"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/events"
)

// ToolsChanged is the change event of a tenant whose workflows' tools changed (a
// workflow saved, activated, deactivated or deleted, the tool-name setting changed):
// every node's MCP sessions of the tenant list them again and hear
// notifications/tools/list_changed.
const ToolsChanged events.Kind = "workflow.tools"

// PublishChanges returns a Service.Changed that tells every node sharing feed that the
// tenant's workflows' tools changed (OnToolsChanged hears it, on this node too).
func PublishChanges(feed events.Bus, log *slog.Logger) func(tenant switchboard.TenantID) {
	return func(tenant switchboard.TenantID) {
		events.PublishAfterCommit(context.Background(), feed, log, events.Event{Kind: ToolsChanged, Tenant: tenant})
	}
}

// OnToolsChanged calls fn with the tenant of every change of its workflows' tools any
// node sharing feed published (PublishChanges), until stop is called. fn must not
// block.
func OnToolsChanged(feed events.Bus, fn func(tenant switchboard.TenantID)) (stop func()) {
	return feed.Subscribe(func(e events.Event) {
		if e.Kind == ToolsChanged && e.Tenant != "" {
			fn(e.Tenant)
		}
	})
}
