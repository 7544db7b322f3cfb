package keyring

import (
	"context"

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
