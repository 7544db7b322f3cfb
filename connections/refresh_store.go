package connections

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-hub/switchboard"
)

// claimRefresh takes the refresh lease of a connection until until, unless another
// process holds an unexpired one. The lease is a conditional UPDATE, so it works the
// same on SQLite and PostgreSQL and across processes sharing the database; no
// transaction stays open while the provider answers.
func (s *Store) claimRefresh(ctx context.Context, tenant switchboard.TenantID, id, claim string, now, until time.Time) (bool, error) {
	res := s.db.WithContext(ctx).Model(&Connection{}).
		Where("tenant_id = ? AND id = ? AND (refresh_claim = '' OR refresh_claim_until IS NULL OR refresh_claim_until < ?)", tenant, id, now.UTC()).
		UpdateColumns(map[string]any{"refresh_claim": claim, "refresh_claim_until": until.UTC().Truncate(time.Microsecond)})
	if res.Error != nil {
		return false, switchboard.Internal(fmt.Errorf("claim refresh of connection %s: %w", id, res.Error))
	}
	return res.RowsAffected == 1, nil
}

// releaseRefresh gives the lease up and records why the refresh failed ("" for no
// failure); status, when not empty, becomes the connection's status (at the next
// version).
func (s *Store) releaseRefresh(ctx context.Context, tenant switchboard.TenantID, id, claim, lastErr string) error {
	if len(lastErr) > 500 {
		lastErr = lastErr[:500]
	}
	updates := map[string]any{"refresh_claim": "", "refresh_claim_until": nil}
	if lastErr != "" {
		updates["last_refresh_error"] = lastErr
	}
	res := s.db.WithContext(ctx).Model(&Connection{}).
		Where("tenant_id = ? AND id = ? AND refresh_claim = ?", tenant, id, claim).UpdateColumns(updates)
	if res.Error != nil {
		return switchboard.Internal(fmt.Errorf("release refresh of connection %s: %w", id, res.Error))
	}
	return nil
}

// storeRefreshed seals refreshed credentials, the rotated refresh token with the new
// access token, in one UPDATE that also ends the lease; it applies only if the
// connection is still at version and the lease is still claim's. now is the refresh's
// time (refreshed_at), by the service's clock.
func (s *Store) storeRefreshed(ctx context.Context, tenant switchboard.TenantID, id string, version int64, claim string, creds Credentials, now time.Time) (Connection, error) {
	sealed, keyID, err := sealCredentials(ctx, s.kr, tenant, id, creds)
	if err != nil {
		return Connection{}, switchboard.Internal(fmt.Errorf("store refreshed connection %s: %w", id, err))
	}
	now = now.UTC().Truncate(time.Microsecond)
	updates := map[string]any{
		"sealed": sealed, "key_id": keyID, "status": StatusActive, "version": version + 1, "refreshed_at": now, "updated_at": now,
		"expires_at": nil, "refreshable": creds.RefreshToken != "", "last_refresh_error": "", "refresh_claim": "", "refresh_claim_until": nil,
	}
	if !creds.Expiry.IsZero() {
		updates["expires_at"] = creds.Expiry.UTC().Truncate(time.Microsecond)
	}
	res := s.db.WithContext(ctx).Model(&Connection{}).
		Where("tenant_id = ? AND id = ? AND version = ? AND refresh_claim = ?", tenant, id, version, claim).UpdateColumns(updates)
	if res.Error != nil {
		return Connection{}, switchboard.Internal(fmt.Errorf("store refreshed connection %s: %w", id, res.Error))
	}
	if res.RowsAffected == 0 {
		return Connection{}, switchboard.Errorf(switchboard.CodeConflict, "the connection changed while its token was refreshed")
	}
	return s.Get(ctx, tenant, id)
}

// markRefreshFailed sets the status (needs_reconnect after a refused refresh token)
// and the failure, if the connection is still at version.
func (s *Store) markRefreshFailed(ctx context.Context, tenant switchboard.TenantID, id string, version int64, status Status, lastErr string) (Connection, error) {
	if len(lastErr) > 500 {
		lastErr = lastErr[:500]
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	return s.update(ctx, tenant, id, version, map[string]any{"status": status, "version": version + 1, "updated_at": now, "last_refresh_error": lastErr})
}

// connectionRef names a connection of a tenant.
type connectionRef struct {
	TenantID switchboard.TenantID
	ID       string
}

// dueForRefresh lists, across every tenant, usable connections holding a refresh token
// whose access token expires before expiring, or that were not refreshed (or made)
// since idle. It is the background refresher's scan, the one store read that is not
// about one tenant: it returns only references, and each refresh then goes through the
// tenant's own methods.
func (s *Store) dueForRefresh(ctx context.Context, expiring, idle time.Time, limit int) ([]connectionRef, error) {
	var refs []connectionRef
	err := s.db.WithContext(ctx).Model(&Connection{}).Select("tenant_id, id").
		Where("refreshable = ? AND status IN ?", true, []Status{StatusActive, StatusExpiring}).
		Where("(expires_at IS NOT NULL AND expires_at < ?) OR COALESCE(refreshed_at, created_at) < ?", expiring.UTC(), idle.UTC()).
		Order("expires_at").Limit(limit).Scan(&refs).Error
	if err != nil {
		return nil, fmt.Errorf("list connections due for refresh: %w", err)
	}
	return refs, nil
}
