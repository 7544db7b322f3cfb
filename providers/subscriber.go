package providers

import "context"

// Subscriber is a Caller whose client's session can be subscribed to a resource's
// updates, as the client's own resources/subscribe would: from then on the session
// hears notifications/resources/updated for uri, on whichever node the change is
// made. A Caller of a client without a session (the 2026-07-28 protocol version,
// which subscribes with subscriptions/listen) is not one, or answers an error that
// says so.
type Subscriber interface {
	SubscribeResource(ctx context.Context, uri string) error
}
