package events

import (
	"context"
	"log/slog"
	"time"
)

// publishTimeout bounds a detached publication.
const publishTimeout = 5 * time.Second

// PublishAfterCommit publishes e on b for a change already committed: detached from
// ctx's cancellation (a client hanging up after the commit must not keep other nodes
// from hearing of it), bounded in time, and logged rather than returned when it fails,
// since the change itself succeeded (the other nodes' TTLs are the backstop). A nil
// bus does nothing.
func PublishAfterCommit(ctx context.Context, b Bus, log *slog.Logger, e Event) {
	if b == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	if err := b.Publish(ctx, e); err != nil {
		if log == nil {
			log = slog.Default()
		}
		log.Error("publish change event", "kind", e.Kind, "tenant", e.Tenant, "id", e.ID, "err", err)
	}
}
