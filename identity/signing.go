package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/keyring"
)

// signerTTL is how long a node signs with the key it loaded before it looks again, so
// a key retired by `switchboard keys rotate` in another process stops signing soon
// even without the change feed (SQLite has none across processes).
const signerTTL = time.Minute

// keyMissEvery bounds how often an unknown key id in a presented token costs a
// database lookup per tenant: a stream of forged tokens is answered from memory.
const keyMissEvery = time.Second

// signingKeys holds the tenants' access token signing keys: each tenant's current
// private key (loaded from the database, opened with the keyring) and every public
// key that still verifies.
type signingKeys struct {
	db *gorm.DB
	kr keyring.Keyring

	mu       sync.Mutex
	signers  map[switchboard.TenantID]*signer
	public   map[string]*verifyKey // by key id; tenant inside
	lastMiss map[switchboard.TenantID]time.Time
}

type signer struct {
	kid      string
	key      *ecdsa.PrivateKey
	loadedAt time.Time
}

type verifyKey struct {
	tenant  switchboard.TenantID
	key     *ecdsa.PublicKey
	retired *time.Time
}

func newSigningKeys(db *gorm.DB, kr keyring.Keyring) *signingKeys {
	return &signingKeys{db: db, kr: kr, signers: map[switchboard.TenantID]*signer{}, public: map[string]*verifyKey{}, lastMiss: map[switchboard.TenantID]time.Time{}}
}

// signingAAD binds a sealed private key to its tenant and id.
func signingAAD(tenant switchboard.TenantID, id string) []byte {
	return []byte("switchboard/oauth-signing-key/v1\x00" + string(tenant) + "\x00" + id)
}

// forget drops every cached key: the keyring rotated, or the feed had a gap.
func (k *signingKeys) forget() {
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.signers)
	clear(k.public)
	clear(k.lastMiss)
}

// current returns the tenant's signing key, creating the tenant's first (or, after a
// retirement, next) one.
func (k *signingKeys) current(ctx context.Context, tenant switchboard.TenantID, now time.Time) (*signer, error) {
	k.mu.Lock()
	s := k.signers[tenant]
	k.mu.Unlock()
	if s != nil && now.Sub(s.loadedAt) < signerTTL {
		return s, nil
	}
	var row signingKey
	err := k.db.WithContext(ctx).Where("tenant_id = ? AND retired_at IS NULL", tenant).Order("created_at DESC").Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		row, err = k.create(ctx, tenant, now)
		if err != nil {
			return nil, err
		}
	case err != nil:
		return nil, switchboard.Internal(fmt.Errorf("read the signing key: %w", err))
	}
	raw, err := k.kr.Open(ctx, row.KeyID, row.Sealed, signingAAD(tenant, row.ID))
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("open signing key %s: %w", row.ID, err))
	}
	parsed, err := x509.ParsePKCS8PrivateKey(raw)
	clear(raw)
	if err != nil {
		return nil, switchboard.Internal(fmt.Errorf("parse signing key %s: %w", row.ID, err))
	}
	priv, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		return nil, switchboard.Internal(fmt.Errorf("signing key %s is not an ECDSA key", row.ID))
	}
	s = &signer{kid: row.ID, key: priv, loadedAt: now}
	k.mu.Lock()
	k.signers[tenant] = s
	k.public[row.ID] = &verifyKey{tenant: tenant, key: &priv.PublicKey}
	k.mu.Unlock()
	return s, nil
}

// create makes a new P-256 key for the tenant, sealed by the keyring.
func (k *signingKeys) create(ctx context.Context, tenant switchboard.TenantID, now time.Time) (signingKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return signingKey{}, switchboard.Internal(fmt.Errorf("generate signing key: %w", err))
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return signingKey{}, switchboard.Internal(fmt.Errorf("encode signing key: %w", err))
	}
	pub, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return signingKey{}, switchboard.Internal(fmt.Errorf("encode signing key: %w", err))
	}
	row := signingKey{ID: switchboard.NewID("sgk"), TenantID: tenant, Public: base64.StdEncoding.EncodeToString(pub), CreatedAt: now.UTC()}
	row.Sealed, row.KeyID, err = k.kr.Seal(ctx, der, signingAAD(tenant, row.ID))
	clear(der)
	if err != nil {
		return signingKey{}, switchboard.Internal(fmt.Errorf("seal signing key: %w", err))
	}
	if err := k.db.WithContext(ctx).Create(&row).Error; err != nil {
		return signingKey{}, switchboard.Internal(fmt.Errorf("store signing key: %w", err))
	}
	return row, nil
}

// verifier returns the public key kid names, if it is the tenant's and still verifies
// tokens issued until now-lifetime.
func (k *signingKeys) verifier(ctx context.Context, tenant switchboard.TenantID, kid string, now time.Time) (*ecdsa.PublicKey, error) {
	k.mu.Lock()
	v := k.public[kid]
	missed := now.Sub(k.lastMiss[tenant]) < keyMissEvery
	k.mu.Unlock()
	if v == nil {
		if missed {
			return nil, nil
		}
		var row signingKey
		err := k.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenant, kid).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			k.mu.Lock()
			k.lastMiss[tenant] = now
			k.mu.Unlock()
			return nil, nil
		}
		if err != nil {
			return nil, switchboard.Internal(fmt.Errorf("read signing key: %w", err))
		}
		der, err := base64.StdEncoding.DecodeString(row.Public)
		if err != nil {
			return nil, switchboard.Internal(fmt.Errorf("decode signing key %s: %w", row.ID, err))
		}
		parsed, err := x509.ParsePKIXPublicKey(der)
		pub, ok := parsed.(*ecdsa.PublicKey)
		if err != nil || !ok {
			return nil, switchboard.Internal(fmt.Errorf("parse signing key %s", row.ID))
		}
		v = &verifyKey{tenant: tenant, key: pub, retired: row.RetiredAt}
		k.mu.Lock()
		k.public[kid] = v
		k.mu.Unlock()
	}
	if v.tenant != tenant || (v.retired != nil && now.After(v.retired.Add(AccessTokenLifetime))) {
		return nil, nil
	}
	return v.key, nil
}

// RetireSigningKeys retires every tenant's signing key: new access tokens are signed
// with new keys, and tokens already issued verify until they expire. `switchboard keys
// rotate` calls it.
func RetireSigningKeys(ctx context.Context, db *gorm.DB, now time.Time) (int64, error) {
	res := db.WithContext(ctx).Model(&signingKey{}).Where("retired_at IS NULL").Update("retired_at", now.UTC())
	if res.Error != nil {
		return 0, fmt.Errorf("retire signing keys: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// SealedRecords returns the signing keys as records for key rotation, so `switchboard
// keys rotate` re-seals them under the keyring's new key.
func SealedRecords(db *gorm.DB, kr keyring.Keyring) keyring.SealedRecords {
	return &keyring.SealedTable{
		DB: db, Keyring: kr, Name: "oauth_signing_keys", Table: "oauth_signing_keys",
		Parts: []keyring.SealedColumns{{Sealed: "sealed", KeyID: "key_id", AAD: func(r keyring.SealedRow) []byte { return signingAAD(r.TenantID, r.ID) }}},
	}
}
