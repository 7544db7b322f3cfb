package runs

import (
	"context"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/events"
)

// StateChanged is the change event of a run whose state changed (working,
// input_required, completed, failed, canceled), published by the node that stored
// it to every node: ID is the run's id. It carries no state: a subscriber reads the
// run again.
const StateChanged events.Kind = "run.state"

// publishStates has the store publish every change of a run's state it makes on
// feed.
func (e *Executor) publishStates(feed events.Bus) {
	e.store.changed = func(ctx context.Context, tenant switchboard.TenantID, id string) {
		events.PublishAfterCommit(ctx, feed, e.log, events.Event{Kind: StateChanged, Tenant: tenant, ID: id})
	}
}

// OnStateChange calls fn for every change of a run's state that any node sharing
// feed stored (this node's included), until stop is called. fn is called from the
// feed's goroutine and must not block. Changes made while the feed was disconnected
// are not heard of (the feed's gap): a subscriber that must not miss an end reads the
// run again.
func OnStateChange(feed events.Bus, fn func(tenant switchboard.TenantID, runID string)) (stop func()) {
	if feed == nil {
		return func() {}
	}
	return feed.Subscribe(func(ev events.Event) {
		if ev.Kind == StateChanged && ev.ID != "" {
			fn(ev.Tenant, ev.ID)
		}
	})
}
