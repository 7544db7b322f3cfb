// Package keyring seals secrets at rest: AES-256-GCM under keys held in a local key
// file or wrapped by a HashiCorp Vault Transit key, each ciphertext naming the key that
// sealed it so keys rotate while old records stay readable. It also derives stable
// per-purpose secrets from the current key, rotates the key file, and re-seals under
// the newest key every record of the stores that seal with it: each store describes
// its sealed columns as SealedRecords (a SealedTable, mostly) and Rotate walks them.
//
// Start from [Keyring] and its two kinds, [LocalKeyring] and [VaultKeyring]; [Rotator]
// re-seals the [SealedRecords] of every store under the newest key.
package keyring

import "context"

// Keyring seals and opens secrets. Each ciphertext is opened with the key that
// sealed it, named by keyID, so keys can rotate while old records stay readable.
type Keyring interface {
	Seal(ctx context.Context, plaintext, aad []byte) (ciphertext []byte, keyID string, err error)
	Open(ctx context.Context, keyID string, ciphertext, aad []byte) ([]byte, error)
}

// Rotator is a Keyring whose sealing key can be replaced, for `switchboard keys rotate`.
type Rotator interface {
	Keyring
	// ActiveKeyID returns the ID of the key that seals now, as Seal reports it; records
	// under any other key are due for re-sealing.
	ActiveKeyID(ctx context.Context) (string, error)
	// Rotate makes a new key the one that seals and returns its ID. Records sealed under
	// older keys still open.
	Rotate(ctx context.Context) (string, error)
}
