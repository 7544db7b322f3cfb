package connections

import (
	"context"
	"fmt"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/keyring"
)

// SealedRecords returns the store's connections as records for key rotation.
func (s *Store) SealedRecords() keyring.SealedRecords { return sealedConnections{s} }

type sealedConnections struct{ s *Store }

func (sealedConnections) Kind() string { return "connections" }

func (r sealedConnections) Stale(ctx context.Context, keyID, after string, limit int) ([]keyring.SealedRef, error) {
	var rows []Connection
	err := r.s.db.WithContext(ctx).Select("id", "tenant_id", "key_id", "version").
		Where("key_id <> ? AND id > ?", keyID, after).Order("id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list connections to re-seal: %w", err)
	}
	refs := make([]keyring.SealedRef, len(rows))
	for i, c := range rows {
		refs[i] = keyring.SealedRef{TenantID: c.TenantID, ID: c.ID, KeyID: c.KeyID, Version: c.Version}
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
func (r sealedConnections) Reseal(ctx context.Context, ref keyring.SealedRef) (bool, error) {
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

// SealedRecordsAll returns the connections, the tenants' and the deployment's OAuth app
// secrets and the OAuth flows' sealed states of the store: everything this package
// seals.
func (s *Store) SealedRecordsAll() []keyring.SealedRecords {
	return []keyring.SealedRecords{
		s.SealedRecords(),
		&keyring.SealedTable{
			DB: s.db, Keyring: s.kr, Name: "oauth_apps", Table: "oauth_apps", Columns: []string{"provider"},
			Parts: []keyring.SealedColumns{{Sealed: "sealed", KeyID: "key_id", AAD: func(r keyring.SealedRow) []byte { return oauthAppAAD(r.TenantID, r.Columns["provider"]) }}},
		},
		&keyring.SealedTable{
			DB: s.db, Keyring: s.kr, Name: "operator_oauth_apps", Table: "operator_oauth_apps", Columns: []string{"provider"},
			Parts: []keyring.SealedColumns{{Sealed: "sealed", KeyID: "key_id", AAD: func(r keyring.SealedRow) []byte { return operatorOAuthAppAAD(r.Columns["provider"]) }}},
		},
		&keyring.SealedTable{
			DB: s.db, Keyring: s.kr, Name: "oauth_states", Table: "oauth_states",
			Parts: []keyring.SealedColumns{{Sealed: "sealed", KeyID: "key_id", AAD: func(r keyring.SealedRow) []byte { return oauthStateAAD(r.TenantID, r.ID) }}},
		},
	}
}
