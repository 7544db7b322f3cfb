package tenants

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/events"
)

// keyPrefix starts every API key, so that a leaked key is recognisable (secret scanners)
// and a malformed one is refused before any lookup.
const keyPrefix = "sbk_"

// prefixLen and secretLen are the lengths of a key's two parts in RandomToken's alphabet.
const (
	prefixLen = 12
	secretLen = 52 // RandomToken(32): 256 bits
)

// CreateKey creates an API key for one of the tenant's users and returns it in the
// clear, once: "sbk_" + a 12-character prefix + "_" + a 256-bit secret. Only the prefix
// and the SHA-256 of the whole key are stored. Operator keys may manage tenants.
func (s *Store) CreateKey(ctx context.Context, tenant switchboard.TenantID, userID, name string, operator bool) (string, APIKey, error) {
	return s.CreateExpiringKey(ctx, tenant, userID, name, operator, nil)
}

// CreateExpiringKey is CreateKey for a key that stops working at expiresAt (nil: never).
// An expiry that is not in the future is refused, naming the field.
func (s *Store) CreateExpiringKey(ctx context.Context, tenant switchboard.TenantID, userID, name string, operator bool, expiresAt *time.Time) (string, APIKey, error) {
	if expiresAt != nil && !expiresAt.After(time.Now()) {
		return "", APIKey{}, switchboard.Invalid("expires_at", "must be in the future")
	}
	return createKeyBy(s.db.WithContext(ctx), tenant, userID, nil, name, operator, userID, expiresAt)
}

// CreateAgentKey creates an API key for an agent, which acts on behalf of userID;
// createdBy is the user who asked for it (the agent's creator or an admin).
func (s *Store) CreateAgentKey(ctx context.Context, tenant switchboard.TenantID, userID, agentID, name, createdBy string) (string, APIKey, error) {
	return s.CreateExpiringAgentKey(ctx, tenant, userID, agentID, name, createdBy, nil)
}

// CreateExpiringAgentKey is CreateAgentKey for a key that stops working at expiresAt
// (nil: never).
func (s *Store) CreateExpiringAgentKey(ctx context.Context, tenant switchboard.TenantID, userID, agentID, name, createdBy string, expiresAt *time.Time) (string, APIKey, error) {
	if expiresAt != nil && !expiresAt.After(time.Now()) {
		return "", APIKey{}, switchboard.Invalid("expires_at", "must be in the future")
	}
	if agentID == "" || len(agentID) > 40 {
		return "", APIKey{}, switchboard.Invalid("agent_id", "must be an agent ID")
	}
	if createdBy == "" {
		return "", APIKey{}, switchboard.Invalid("created_by", "must name the user creating the key")
	}
	return createKeyBy(s.db.WithContext(ctx), tenant, userID, &agentID, name, false, createdBy, expiresAt)
}

// createKey creates a user's own key.
func createKey(db *gorm.DB, tenant switchboard.TenantID, userID string, agentID *string, name string, operator bool) (string, APIKey, error) {
	return createKeyBy(db, tenant, userID, agentID, name, operator, userID, nil)
}

func createKeyBy(db *gorm.DB, tenant switchboard.TenantID, userID string, agentID *string, name string, operator bool, createdBy string, expiresAt *time.Time) (string, APIKey, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 100 {
		return "", APIKey{}, switchboard.Invalid("name", "must be 1 to 100 characters")
	}
	var n int64
	if err := db.Model(&User{}).Where("tenant_id = ? AND id = ?", tenant, userID).Count(&n).Error; err != nil {
		return "", APIKey{}, switchboard.Internal(fmt.Errorf("create key: find user: %w", err))
	}
	if n == 0 {
		return "", APIKey{}, switchboard.NotFound("user")
	}
	for attempt := 0; ; attempt++ {
		prefix := switchboard.RandomToken(8)[:prefixLen]
		plaintext := keyPrefix + prefix + "_" + switchboard.RandomToken(32)
		sum := sha256.Sum256([]byte(plaintext))
		k := APIKey{
			ID:        switchboard.NewID("key"),
			TenantID:  tenant,
			UserID:    userID,
			AgentID:   agentID,
			CreatedBy: createdBy,
			Name:      name,
			Prefix:    prefix,
			Hash:      hex.EncodeToString(sum[:]),
			Operator:  operator,
		}
		if expiresAt != nil {
			at := expiresAt.UTC().Truncate(time.Microsecond)
			k.ExpiresAt = &at
		}
		err := db.Create(&k).Error
		if err == nil {
			return plaintext, k, nil
		}
		if errors.Is(err, gorm.ErrDuplicatedKey) && attempt < 3 {
			continue // a 60-bit prefix collided; draw again
		}
		return "", APIKey{}, switchboard.Internal(fmt.Errorf("create key: %w", err))
	}
}

// ListKeys returns the tenant's keys, newest first, revoked ones included.
func (s *Store) ListKeys(ctx context.Context, tenant switchboard.TenantID) ([]APIKey, error) {
	var ks []APIKey
	if err := s.db.WithContext(ctx).Where("tenant_id = ?", tenant).Order("created_at DESC, id DESC").Find(&ks).Error; err != nil {
		return nil, switchboard.Internal(fmt.Errorf("list keys: %w", err))
	}
	return ks, nil
}

// Key returns one of the tenant's keys.
func (s *Store) Key(ctx context.Context, tenant switchboard.TenantID, id string) (APIKey, error) {
	var k APIKey
	err := s.db.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenant, id).Take(&k).Error
	return k, notFound(err, "API key", "read key "+id)
}

// RevokeKey revokes one of the tenant's keys and reports whether this call revoked it:
// revoking a revoked key changes nothing and reports false, so the caller records one
// revocation however often it is asked. It takes effect at once in this process and
// through the change feed, in the others (within the cache's lifetime, 30 s, if the
// event is lost).
func (s *Store) RevokeKey(ctx context.Context, tenant switchboard.TenantID, id string) (bool, error) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	res := s.db.WithContext(ctx).Model(&APIKey{}).
		Where("tenant_id = ? AND id = ? AND revoked_at IS NULL", tenant, id).
		Update("revoked_at", now)
	if res.Error != nil {
		return false, switchboard.Internal(fmt.Errorf("revoke key %s: %w", id, res.Error))
	}
	s.cache.invalidateKey(id)
	if res.RowsAffected > 0 {
		events.PublishAfterCommit(ctx, s.feed, nil, events.Event{Kind: events.KeyRevoked, Tenant: tenant, ID: id})
	}
	if res.RowsAffected == 0 {
		if _, err := s.Key(ctx, tenant, id); err != nil {
			return false, err
		}
		return false, nil
	}
	s.keysRevoked(tenant, []string{id})
	return true, nil
}
