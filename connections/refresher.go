package connections

import (
	"context"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// refreshBatch bounds the connections one background pass refreshes.
const refreshBatch = 200

// RunRefresher refreshes, every interval until ctx ends, the tokens that expire within
// BackgroundWindow and the refresh tokens not used for IdleRefresh, and purges OAuth
// states expired for a day. Several processes may run it against one database: each
// connection is refreshed once (see fresh).
func (s *Service) RunRefresher(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.RefreshDue(ctx); err != nil && ctx.Err() == nil {
			s.logger().Error("background token refresh", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RefreshDue runs one pass of the background refresher and returns how many
// connections it refreshed or found fresh; failures are recorded on each connection
// and audited, not returned.
func (s *Service) RefreshDue(ctx context.Context) (int, error) {
	now := s.now()
	if _, err := s.store.PurgeOAuthStates(ctx, now.Add(-24*time.Hour)); err != nil {
		s.logger().Error("purge oauth states", "err", err)
	}
	if _, err := s.store.PurgeConnectLinks(ctx, now.Add(-24*time.Hour)); err != nil {
		s.logger().Error("purge connect links", "err", err)
	}
	refs, err := s.store.dueForRefresh(ctx, now.Add(BackgroundWindow), now.Add(-IdleRefresh), refreshBatch)
	if err != nil {
		return 0, switchboard.Internal(err)
	}
	n := 0
	for _, r := range refs {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		if _, err := s.fresh(ctx, r.TenantID, r.ID, refreshKind{window: BackgroundWindow, idle: IdleRefresh}); err != nil {
			continue // recorded by refreshFailed
		}
		n++
	}
	return n, nil
}
