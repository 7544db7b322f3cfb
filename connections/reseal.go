package connections

import (
	"context"
	"fmt"

	"github.com/switchboard-hub/switchboard"
)

// SealedRef names one record holding a sealed secret, as key rotation sees it.
type SealedRef struct {
	TenantID switchboard.TenantID
	ID       string
	KeyID    string
	Version  int64
}

// SealedRecords is one kind of record that holds secrets sealed by the keyring (the
// connections' credentials; tenants' OAuth app secrets), which key rotation re-seals
// under the newest key. Its methods read across tenants: they serve the operator's
// `switchboard keys rotate` and are never reachable from a request.
type SealedRecords interface {
	// Kind names the records in progress lines and audit events, for example "connections".
	Kind() string
	// Stale returns up to limit records sealed under a key other than keyID whose ID
	// sorts after after, in ID order.
	Stale(ctx context.Context, keyID, after string, limit int) ([]SealedRef, error)
	// CountStale counts the records sealed under a key other than keyID.
	CountStale(ctx context.Context, keyID string) (int64, error)
	// Reseal opens the record and seals it again under the keyring's current key, if
	// it is still as ref describes it. It reports false, changing nothing, when the
	// record changed or went away meanwhile: whoever changed it sealed it anew.
	Reseal(ctx context.Context, ref SealedRef) (bool, error)
}

// SealedRecords returns the store's connections as records for key rotation.
func (s *Store) SealedRecords() SealedRecords { return sealedConnections{s} }

type sealedConnections struct{ s *Store }

func (sealedConnections) Kind() string { return "connections" }

func (r sealedConnections) Stale(ctx context.Context, keyID, after string, limit int) ([]SealedRef, error) {
	var rows []Connection
	err := r.s.db.WithContext(ctx).Select("id", "tenant_id", "key_id", "version").
		Where("key_id <> ? AND id > ?", keyID, after).Order("id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list connections to re-seal: %w", err)
	}
	refs := make([]SealedRef, len(rows))
	for i, c := range rows {
		refs[i] = SealedRef{TenantID: c.TenantID, ID: c.ID, KeyID: c.KeyID, Version: c.Version}
	}
	return refs, nil
}

func (r sealedConnections) CountStale(ctx context.Context, keyID string) (int64, error) {
	var n int64
	if err := r.s.db.WithContext(ctx).Model(&Connection{}).Where("key_id <> ?", keyID).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count connections to re-seal: %w", err)
	}
	return n, nil
}

// Reseal re-seals a connection's credentials, unchanged, under the current key. The
// update holds only while the row keeps its version, key and ciphertext, so a token
// refresh that lands meanwhile wins, and it leaves the version alone, so a refresh
// that read the row before keeps its own optimistic check.
func (r sealedConnections) Reseal(ctx context.Context, ref SealedRef) (bool, error) {
	c, err := r.s.Get(ctx, ref.TenantID, ref.ID)
	if err != nil {
		if switchboard.CodeOf(err) == switchboard.CodeNotFound {
			return false, nil
		}
		return false, err
	}
	if c.Version != ref.Version || c.KeyID != ref.KeyID {
		return false, nil
	}
	creds, err := openCredentials(ctx, r.s.kr, &c)
	if err != nil {
		return false, err
	}
	sealed, keyID, err := sealCredentials(ctx, r.s.kr, c.TenantID, c.ID, creds)
	if err != nil {
		return false, fmt.Errorf("re-seal connection %s: %w", c.ID, err)
	}
	res := r.s.db.WithContext(ctx).Model(&Connection{}).
		Where("tenant_id = ? AND id = ? AND version = ? AND key_id = ? AND sealed = ?", c.TenantID, c.ID, c.Version, c.KeyID, c.Sealed).
		Updates(map[string]any{"sealed": sealed, "key_id": keyID})
	if res.Error != nil {
		return false, fmt.Errorf("re-seal connection %s: %w", c.ID, res.Error)
	}
	return res.RowsAffected == 1, nil
}
