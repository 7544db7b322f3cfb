package connections

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/events"
)

// Departure is what became of a removed user's connections.
type Departure struct {
	// Disconnected are the private connections revoked at their provider (where it
	// can) and deleted.
	Disconnected []string
	// HandedOver are the connections whose owner is now the recipient.
	HandedOver []string
}

// ReleaseRemovedUser deals with the connections a removed user owned, for the admin p
// who removed them, so that none keeps a departed person's live token under no one's
// care. With to empty, their private connections are disconnected (Disconnect: the
// token revoked at the provider, the credentials deleted) and their shared ones, which
// others rely on, are handed to p. With to set (a user of p's tenant, who the caller
// checked may own them), every one of them is handed to that user.
func (s *Service) ReleaseRemovedUser(ctx context.Context, p switchboard.Principal, removedUserID, to string) (Departure, error) {
	if !p.IsAdmin() {
		return Departure{}, switchboard.Errorf(switchboard.CodeForbidden, "only a tenant admin may release a removed user's connections")
	}
	all, err := s.store.List(ctx, p.TenantID)
	if err != nil {
		return Departure{}, err
	}
	var out Departure
	for _, c := range all {
		if c.OwnerUserID != removedUserID {
			continue
		}
		if to == "" && !c.Shared {
			if _, err := s.Disconnect(ctx, p, c.ID); err != nil {
				return out, fmt.Errorf("disconnect connection %s of removed user %s: %w", c.ID, removedUserID, err)
			}
			out.Disconnected = append(out.Disconnected, c.ID)
			continue
		}
		recipient := to
		if recipient == "" {
			recipient = p.UserID
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		if _, err := s.store.update(ctx, p.TenantID, c.ID, c.Version, map[string]any{"owner_user_id": recipient, "version": c.Version + 1, "updated_at": now}); err != nil {
			return out, fmt.Errorf("hand connection %s of removed user %s over: %w", c.ID, removedUserID, err)
		}
		s.record(p, audit.KindConnectionHandedOver, c.ID, "", fmt.Sprintf("%s %s of removed user %s handed to user %s", c.Provider, c.AccountLabel, removedUserID, recipient))
		s.notify(ctx, events.ConnectionChanged, p.TenantID, c.ID)
		out.HandedOver = append(out.HandedOver, c.ID)
	}
	return out, nil
}
