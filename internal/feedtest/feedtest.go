// Package feedtest is a change feed for tests: a bus on which a test plays another
// node, delivering events as if they came from elsewhere, and sees what was published.
//
// Start from [Bus].
package feedtest

import (
	"context"
	"slices"
	"sync"

	"github.com/switchboard-hub/switchboard/events"
)

// OtherNode is the Origin of the events Deliver hands over.
const OtherNode = "node_other"

// Bus is an in-process bus (events.Local) that also records what was published and
// lets the test deliver events from another node.
type Bus struct {
	*events.Local
	mu        sync.Mutex
	published []events.Event
}

var _ events.Bus = (*Bus)(nil)

// New returns a Bus for the node "node_self".
func New() *Bus { return &Bus{Local: events.NewLocal("node_self")} }

// Publish records e and delivers it here, as a bus does.
func (b *Bus) Publish(ctx context.Context, e events.Event) error {
	if err := b.Local.Publish(ctx, e); err != nil {
		return err
	}
	e.Origin = b.Node()
	b.mu.Lock()
	b.published = append(b.published, e)
	b.mu.Unlock()
	return nil
}

// Published returns the events published on this bus so far.
func (b *Bus) Published() []events.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.published)
}

// Deliver hands e to this node's subscribers as an event from another node (a Gap
// too: what the bus delivers after a reconnection).
func (b *Bus) Deliver(e events.Event) {
	if e.Origin == "" {
		e.Origin = OtherNode
	}
	b.Local.Deliver(e)
}
